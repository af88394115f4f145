package acp

import (
	"bytes"
	"testing"
	"time"
)

func TestCancelWriter_AwaitsEveryOwedCancelRequest(t *testing.T) {
	var buf bytes.Buffer
	cw := newCancelWriter(&buf)
	if !cw.await(time.Millisecond) {
		t.Fatal("nothing owed, yet the wait failed")
	}
	cw.owe()
	cw.owe()
	go func() {
		time.Sleep(20 * time.Millisecond)
		cw.Write([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{}}` + "\n"))
		cw.Write([]byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}` + "\n"))
	}()
	if cw.await(300 * time.Millisecond) {
		t.Fatal("one of two owed notifications written, yet the wait succeeded")
	}
	cw.Write([]byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}` + "\n"))
	if !cw.await(time.Second) {
		t.Fatal("both written, yet the wait failed")
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("%d lines reached the agent, want 3", n)
	}
}
