// Command hugeline is an ACP agent for kandev's tests: kandev's demo agent
// behind a proxy that, when a prompt holds HUGE-LINE-PLEASE, first writes
// one session/update line of $HUGE_LINE_BYTES bytes, as an agent with a
// runaway tool output would.
//
//	hugeline KANDEV_BINARY
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

func main() {
	agent := exec.Command(os.Args[1], "demo-agent")
	agent.Stderr = os.Stderr
	in, _ := agent.StdinPipe()
	out, _ := agent.StdoutPipe()
	if err := agent.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	go func() {
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			mu.Lock()
			os.Stdout.Write(line)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	size, _ := strconv.Atoi(os.Getenv("HUGE_LINE_BYTES"))
	br := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if bytes.Contains(line, []byte("HUGE-LINE-PLEASE")) && bytes.Contains(line, []byte(`"session/prompt"`)) {
			mu.Lock()
			writeHuge(os.Stdout, size)
			mu.Unlock()
		}
		in.Write(line)
		if err != nil {
			in.Close()
			break
		}
	}
	agent.Wait()
}

// writeHuge writes a session/update notification of about size bytes in
// pieces, never holding it whole.
func writeHuge(w io.Writer, size int) {
	fmt.Fprint(w, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
	piece := bytes.Repeat([]byte("y"), 1<<20)
	for n := 0; n < size; n += len(piece) {
		w.Write(piece)
	}
	fmt.Fprint(w, "\"}}}}\n")
}
