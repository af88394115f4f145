package fakemodel

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// RequestLog numbers the requests the fake counts and appends every request,
// before it is answered, to a file as one JSON line {n, method, path, body}
// plus the fields the format adds. body is the request's JSON, its text when
// it is not JSON, or null when there is none.
type RequestLog struct {
	mu sync.Mutex
	n  int
	f  *os.File
}

// OpenRequestLog appends to the file at path; with path "" it only counts.
func OpenRequestLog(path string) *RequestLog { return &RequestLog{f: openLog(path)} }

// Record logs r and returns its number: the next one when counted, else 0.
func (l *RequestLog) Record(r *http.Request, body []byte, counted bool, extra map[string]any) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	if counted {
		l.n++
		n = l.n
	}
	if l.f == nil {
		return n
	}
	raw := json.RawMessage(body)
	switch {
	case len(body) == 0:
		raw = json.RawMessage("null")
	case !json.Valid(body):
		raw, _ = json.Marshal(string(body))
	}
	line := map[string]any{"n": n, "method": r.Method, "path": r.URL.Path, "body": raw}
	for k, v := range extra {
		line[k] = v
	}
	b, _ := json.Marshal(line)
	l.f.Write(append(b, '\n'))
	return n
}

// Pacing slows the streamed answers of some turns down, as the flags
// -delay and -delay-word say, so a test can act while a turn streams.
type Pacing struct {
	Delay time.Duration // between streamed pieces
	Word  string        // only for turns whose latest user text holds it ("": every turn)
}

// flags registers -delay and -delay-word.
func (p *Pacing) flags(fs *flag.FlagSet) {
	fs.DurationVar(&p.Delay, "delay", 0, "pause between streamed events or chunks")
	fs.StringVar(&p.Word, "delay-word", "", "pause only when the latest user text contains this word")
}

// For is the pause between the pieces of the answer to latestUser.
func (p *Pacing) For(latestUser string) time.Duration {
	if p.Word != "" && !strings.Contains(latestUser, p.Word) {
		return 0
	}
	return p.Delay
}
