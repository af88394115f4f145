package fakemodel

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// openLog opens the request log for appending; nil when path is "".
func openLog(path string) *os.File {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	return f
}

// options say how serve announces itself and when it gives up.
type options struct {
	Idle    time.Duration // exit after this long without a request
	Suffix  string        // appended to http://ADDR in the announced URL ("/v1")
	URLFile string        // also write the URL to this file, when set
}

// serve listens on 127.0.0.1, prints the base URL, and serves h until the
// process exits: by itself after o.Idle without requests.
func serve(o options, h http.Handler) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	url := fmt.Sprintf("http://%s%s", ln.Addr(), o.Suffix)
	if o.URLFile != "" {
		if err := os.WriteFile(o.URLFile, []byte(url+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(url)
	touched := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-touched:
			case <-time.After(o.Idle):
				log.Printf("no request for %s: exiting", o.Idle)
				os.Exit(0)
			}
		}
	}()
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case touched <- struct{}{}:
		default:
		}
		h.ServeHTTP(w, r)
	})))
}
