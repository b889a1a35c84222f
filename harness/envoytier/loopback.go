package envoytier

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

// loopback hands out addresses of one 127.B.0.0/16 block per run: every scenario's
// listeners get their own address (so listeners of the previous scenario, still closing,
// never hold the port a new one binds, and ports stay as translated: 80 → 10080), and
// every echo backend gets one. Linux routes all of 127.0.0.0/8 to the loopback interface.
//
// The block is owned for the run by a marker socket on 127.B.255.254:markerPort: a second
// run at the same time (another test binary, another engineer's `egharness run`) finds it
// taken and picks another block.
type loopback struct {
	block  byte
	marker net.Listener
	mu     sync.Mutex
	next   int
}

const markerPort = 65011

func newLoopback() (*loopback, error) {
	var lastErr error
	for try := 0; try < 64; try++ {
		b := byte(20 + rand.IntN(230))
		l, err := net.Listen("tcp", fmt.Sprintf("127.%d.255.254:%d", b, markerPort))
		if err != nil {
			lastErr = err
			continue
		}
		return &loopback{block: b, marker: l}, nil
	}
	return nil, fmt.Errorf("no free loopback block 127.x.0.0/16: %w", lastErr)
}

// addr returns a fresh loopback address of the block.
func (l *loopback) addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	l.next++
	// 127.B.0.1 … 127.B.249.250; the run never needs that many.
	return fmt.Sprintf("127.%d.%d.%d", l.block, (n/250)%250, n%250+1)
}

func (l *loopback) close() error { return l.marker.Close() }
