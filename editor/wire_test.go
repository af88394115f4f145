package editor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// syncBuffer is the editor's end of the wire: what kandev acp wrote to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// connectionSide reads what the wire passes on to the SDK's connection.
func connectionSide(wi *wire) <-chan string {
	got := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(wi.in)
		sc.Buffer(make([]byte, 0, 1<<20), 10<<20) // as the SDK's connection reads
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	return got
}

func TestWire_EveryRequestReadBeforeEOFIsAnsweredBeforeDrainReturns(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"two","method":"session/new","params":{}}` // no newline before EOF
	out := &syncBuffer{}
	wi := newWire(out, t.Logf)
	wi.start(strings.NewReader(in))
	got := connectionSide(wi)
	var read []string
	for l := range got {
		read = append(read, l)
	}
	if len(read) != 3 {
		t.Fatalf("the connection read %d lines, want 3: %q", len(read), read)
	}
	drained := make(chan bool)
	go func() { drained <- wi.drain(true, 0) }()
	wi.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	wi.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n"))
	select {
	case <-drained:
		t.Fatal("drain returned while session/new was not answered")
	case <-time.After(100 * time.Millisecond):
	}
	wi.Write([]byte(`{"jsonrpc":"2.0","id":"two","result":{"sessionId":"s"}}` + "\n"))
	select {
	case ok := <-drained:
		if !ok {
			t.Fatal("drain reported unanswered requests")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("drain did not return once every request was answered")
	}
	if n := len(out.lines()); n != 3 {
		t.Fatalf("the editor got %d lines, want the 3 written", n)
	}
}

func TestWire_ABoundedDrainGivesUpOnAnUnansweredRequest(t *testing.T) {
	wi := newWire(&syncBuffer{}, t.Logf)
	wi.start(strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}` + "\n"))
	for range connectionSide(wi) {
	}
	if wi.drain(false, 100*time.Millisecond) {
		t.Fatal("drain reported request 5 answered")
	}
}

func TestWire_ALineTooLongForTheConnectionIsAnsweredWithAnErrorAndTheNextIsServed(t *testing.T) {
	huge := strings.Repeat("x", maxLine)
	cases := []struct {
		name, line, wantID string
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"` + huge + `"}]}}`, "7"},
		{"id last", `{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"` + huge + `"}]},"id":"last"}`, `"last"`},
		{"an id only inside the params is not the request's", `{"jsonrpc":"2.0","method":"session/update","params":{"id":9,"text":"` + huge + `"}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged []string
			out := &syncBuffer{}
			in := c.line + "\n" + `{"jsonrpc":"2.0","id":8,"method":"session/list","params":{}}` + "\n"
			wi := newWire(out, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
			wi.start(strings.NewReader(in))
			var read []string
			for l := range connectionSide(wi) {
				read = append(read, l)
			}
			if len(read) != 1 || gjson.Get(read[0], "id").Int() != 8 {
				t.Fatalf("the connection read %d lines (%.80q), want only the request after the long one", len(read), read)
			}
			if len(logged) != 1 || !strings.Contains(logged[0], fmt.Sprintf("message of %d bytes refused", len(c.line))) {
				t.Fatalf("stderr: %q", logged)
			}
			answers := out.lines()
			if c.wantID == "" {
				if answers[0] != "" {
					t.Fatalf("answered a message without a request id: %q", answers)
				}
				return
			}
			var resp struct {
				ID    json.RawMessage
				Error struct {
					Code    int
					Message string
				}
			}
			if len(answers) != 1 || json.Unmarshal([]byte(answers[0]), &resp) != nil {
				t.Fatalf("answers %q", answers)
			}
			if string(resp.ID) != c.wantID || resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "up to 10485759 bytes") {
				t.Fatalf("answer %s, want an invalid-request error for id %s", answers[0], c.wantID)
			}
			wi.Write([]byte(`{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"))
			if !wi.drain(true, time.Second) {
				t.Fatal("the refused request counts as unanswered")
			}
		})
	}
}

func TestWire_ALineOfExactlyTheLimitIsPassedOn(t *testing.T) {
	prefix := `{"jsonrpc":"2.0","id":3,"method":"x","params":"`
	line := prefix + strings.Repeat("y", maxLine-len(prefix)-2) + `"}`
	wi := newWire(&syncBuffer{}, t.Logf)
	wi.start(strings.NewReader(line + "\n"))
	var read []string
	for l := range connectionSide(wi) {
		read = append(read, l)
	}
	if len(read) != 1 || len(read[0]) != maxLine {
		t.Fatalf("a %d-byte line was not passed on whole (%d lines)", len(line), len(read))
	}
}
