package rpcwire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// syncBuffer collects what a connection writes to its peer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// answered waits until the connection has answered request id.
func (s *syncBuffer) answered(t *testing.T, id int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		out := s.b.String()
		s.mu.Unlock()
		for _, l := range strings.Split(out, "\n") {
			if l != "" && gjson.Get(l, "id").Int() == int64(id) && gjson.Get(l, "result").Exists() {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("request %d was not answered", id)
}

// connection is the SDK's JSON-RPC connection reading what pump passes on
// from the peer's stream: a notification "x/note" blocks its handler until
// release is closed; every request is answered at once.
func connection(t *testing.T, pump *Pump, peer io.Reader, release <-chan struct{}) (*sdk.Connection, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	pr, pw := io.Pipe()
	conn := sdk.NewConnection(func(ctx context.Context, method string, _ json.RawMessage) (any, *sdk.RequestError) {
		if method == "x/note" {
			<-release
		}
		return map[string]bool{"ok": true}, nil
	}, out, pr)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	go pump.Run(peer, pw)
	return conn, out
}

func note(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"x/note","params":{"n":%d}}`, i)
}

func request(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x/ping","params":{}}`, id)
}

// The SDK closes a connection whose handler is behind by 1,024
// notifications; the notifications a Pump takes into a Queue are kept
// however many come, in order, and the connection serves the rest.
func TestPump_NotificationsBeyondTheSDKsQueueAreKeptInOrderAndTheConnectionLives(t *testing.T) {
	const n = 3000
	var peer strings.Builder
	for i := range n {
		peer.WriteString(note(i) + "\n")
		if i == n/2 {
			peer.WriteString(request(1) + "\n")
		}
	}
	peer.WriteString(request(2) + "\n")
	release := make(chan struct{})
	defer close(release)

	// The peer's stream stays open: the connection ends only if it gives up.
	open := func() io.Reader {
		pr, pw := io.Pipe()
		go io.WriteString(pw, peer.String())
		t.Cleanup(func() { pw.Close() })
		return pr
	}
	// Without the queue: the SDK gives up on the connection.
	conn, _ := connection(t, &Pump{}, open(), release)
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the SDK kept a connection 3000 notifications behind: the queue is needed no more")
	}

	var q Queue[int]
	pump := &Pump{Take: func(line []byte) (bool, error) {
		if !IsNotification(line, "x/note") {
			return false, nil
		}
		q.Push(int(gjson.GetBytes(line, "params.n").Int()))
		return true, nil
	}}
	conn, out := connection(t, pump, open(), release)
	out.answered(t, 1)
	out.answered(t, 2) // after every notification
	q.Close()
	var got []int
	for {
		items, ok := q.PopAll()
		if !ok {
			break
		}
		got = append(got, items...)
	}
	if len(got) != n {
		t.Fatalf("%d notifications queued, want %d", len(got), n)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("notification %d came as the %dth", v, i)
		}
	}
	select {
	case <-conn.Done():
		t.Fatal("the connection closed")
	default:
	}
}

// A line over the SDK's 10 MiB would end the connection: a Pump with a
// Limit hands what it kept of it (its size, its request id) to Long, and
// the requests after it are served. Without a Limit, Take gets it whole.
func TestPump_ALineOver10MiBIsRefusedOrTakenWholeAndTheNextIsServed(t *testing.T) {
	huge := strings.Repeat("x", MaxLine)
	long := `{"jsonrpc":"2.0","id":7,"method":"x/ping","params":{"text":"` + huge + `"}}`
	longLast := `{"jsonrpc":"2.0","method":"x/ping","params":{"text":"` + huge + `"},"id":"last"}`
	release := make(chan struct{})
	defer close(release)

	for _, c := range []struct{ line, id string }{{long, "7"}, {longLast, `"last"`}} {
		var refused []*Long
		pump := &Pump{Limit: MaxLine, Long: func(l *Long) { refused = append(refused, l) }}
		_, out := connection(t, pump, strings.NewReader(c.line+"\n"+request(8)+"\n"), release)
		out.answered(t, 8)
		if len(refused) != 1 || refused[0].Size != len(c.line) {
			t.Fatalf("refused %d lines, want the one of %d bytes", len(refused), len(c.line))
		}
		if id, ok := refused[0].ID(); !ok || id != c.id {
			t.Fatalf("id %q %v, want %s", id, ok, c.id)
		}
		if len(refused[0].Head) > keep || len(refused[0].Tail) > 2*keep {
			t.Fatalf("kept %d+%d bytes of a refused line", len(refused[0].Head), len(refused[0].Tail))
		}
	}

	update := `{"jsonrpc":"2.0","method":"x/note","params":{"text":"` + huge + `"}}`
	var taken [][]byte
	pump := &Pump{Take: func(line []byte) (bool, error) {
		if IsNotification(line, "x/note") {
			taken = append(taken, bytes.Clone(line))
			return true, nil
		}
		return false, nil
	}}
	_, out := connection(t, pump, strings.NewReader(update+"\n"+request(9)+"\n"), release)
	out.answered(t, 9)
	if len(taken) != 1 || string(taken[0]) != update {
		t.Fatalf("took %d lines, want the long update whole", len(taken))
	}
}

// What the connection reads is every line not taken, in order, trimmed,
// with no empty line; a line of exactly MaxLine bytes is passed on.
func TestPump_PassesOnTheLinesNotTakenInOrder(t *testing.T) {
	prefix := `{"jsonrpc":"2.0","id":3,"method":"x","params":"`
	exact := prefix + strings.Repeat("y", MaxLine-len(prefix)-2) + `"}`
	in := "  " + request(1) + " \r\n\n   \n" + note(1) + "\n" + exact + "\n" + request(2) // no newline before EOF
	var offered int
	pump := &Pump{Limit: MaxLine, Take: func(line []byte) (bool, error) {
		offered++
		return IsNotification(line, "x/note"), nil
	}, Long: func(l *Long) { t.Errorf("a line of %d bytes was refused", l.Size) }}
	var got bytes.Buffer
	pr, pw := io.Pipe()
	done := make(chan error)
	go func() { done <- pump.Run(strings.NewReader(in), pw) }()
	io.Copy(&got, pr)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := request(1) + "\n" + exact + "\n" + request(2) + "\n"
	if got.String() != want {
		t.Fatalf("passed on %.200q, want %.200q", got.String(), want)
	}
	if offered != 6 {
		t.Fatalf("Take was offered %d lines, want 6 (the empty ones too)", offered)
	}
}

// An error from Take stops the pump and closes the connection's input.
func TestPump_TakeErrorStopsThePump(t *testing.T) {
	stop := fmt.Errorf("not JSON")
	pump := &Pump{Take: func(line []byte) (bool, error) {
		if line[0] != '{' {
			return true, stop
		}
		return false, nil
	}}
	pr, pw := io.Pipe()
	done := make(chan error)
	go func() { done <- pump.Run(strings.NewReader(request(1)+"\ngarbage\n"+request(2)+"\n"), pw) }()
	got, _ := io.ReadAll(pr)
	if err := <-done; err != stop {
		t.Fatalf("Run: %v, want the Take error", err)
	}
	if string(got) != request(1)+"\n" {
		t.Fatalf("passed on %q", got)
	}
}

func TestQueue_ClosedQueueRefusesAndHandsOutWhatIsLeft(t *testing.T) {
	var q Queue[string]
	q.Push("a")
	q.Push("b")
	q.Close()
	if q.Push("c") {
		t.Fatal("a closed queue took an item")
	}
	if items, ok := q.PopAll(); !ok || strings.Join(items, "") != "ab" {
		t.Fatalf("PopAll: %q %v", items, ok)
	}
	if _, ok := q.PopAll(); ok {
		t.Fatal("an empty closed queue handed out items")
	}
}

func TestIDs_OnlyTopLevelIDsOfRequestsAndResponses(t *testing.T) {
	cases := []struct {
		line     string
		req, res string // "" when none
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, "1", ""},
		{`{"jsonrpc":"2.0","id": "a b" ,"method":"m"}`, `"a b"`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", "1"},
		{`{"jsonrpc":"2.0","method":"m","params":{"id":9}}`, "", ""},
		{`not json`, "", ""},
	}
	for _, c := range cases {
		req, _ := RequestID([]byte(c.line))
		res, _ := ResponseID([]byte(c.line))
		if req != c.req || res != c.res {
			t.Errorf("%s: request id %q, response id %q; want %q, %q", c.line, req, res, c.req, c.res)
		}
	}
}
