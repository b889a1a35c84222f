package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interruptible returns a context cancelled by the first SIGINT or SIGTERM, and a function
// that tells which signal came (nil: none). After the first signal the handler is removed,
// so a second Ctrl-C ends the process at once.
func interruptible(parent context.Context) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(parent)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case s := <-sigc:
			mu.Lock()
			got = s
			mu.Unlock()
			signal.Stop(sigc)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() os.Signal {
		signal.Stop(sigc)
		cancel()
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// signalExit is the shell's exit status for a process ended by sig: 128 + its number
// (130 for SIGINT, 143 for SIGTERM).
func signalExit(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
