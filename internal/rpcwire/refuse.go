package rpcwire

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// ReadLine reads one line of br without its newline; a line longer than
// limit (> 0) is read to its end without being kept, and only what Long
// keeps of it is returned: memory stays within limit whatever the peer
// writes.
func ReadLine(br *bufio.Reader, limit int) ([]byte, *Long, error) {
	return readLine(br, limit)
}

// IsRequest reports whether the long line is a request (it names a method
// at its start, where peers write it, and has an id): its sender waits for
// an answer.
func (l *Long) IsRequest() bool {
	_, hasID := l.ID()
	return hasID && gjson.GetBytes(l.Head, "method").Exists()
}

// ErrorAnswer is a JSON-RPC error answering request id (compacted), one line
// with its newline.
func ErrorAnswer(id string, code int, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: json.RawMessage(id), Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// Refusal is the one line that says a message of size bytes was refused.
func Refusal(size, limit int) string {
	return fmt.Sprintf("a JSON-RPC message of %d bytes was refused: lines are read up to %d bytes (10 MiB); send large content as a file or resource link", size, limit)
}
