package state

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

var T0 = time.Now()

func Mark(s string) {
	if os.Getenv("KT") != "" {
		var ru syscall.Rusage
		syscall.Getrusage(0, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		fmt.Fprintf(os.Stderr, "%-12s %6.1fms cpu %6.1fms\n", s, float64(time.Since(T0).Microseconds())/1000, float64(cpu.Microseconds())/1000)
	}
}
