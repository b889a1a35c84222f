package ir

import (
	"slices"
	"testing"
)

func TestDestinationsOrderAndOwners(t *testing.T) {
	d := func(name string) *Destination { return &Destination{Name: name} }
	x := &XDS{
		HTTP: []*HTTPListener{{Routes: []*HTTPRoute{
			{Name: "h1", Destination: d("c-h1"), Mirrors: []*Mirror{{Destination: d("c-m1")}, {}}},
			{Name: "redirect"}, // no destination: left out
		}}},
		TCP: []*TCPListener{{Routes: []*TCPRoute{{Name: "t1", Destination: d("c-t1")}}}},
		UDP: []*UDPListener{{}, {Route: &UDPRoute{Name: "u1", Destination: d("c-u1")}}},
	}
	var got []string
	for route, dest := range x.Destinations() {
		got = append(got, route+"→"+dest.Name)
	}
	want := []string{"h1→c-h1", "h1→c-m1", "t1→c-t1", "u1→c-u1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// stopping early stops the walk
	n := 0
	for range x.Destinations() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("%d after break", n)
	}
	var none *XDS
	for range none.Destinations() {
		t.Error("a nil IR has destinations")
	}
}
