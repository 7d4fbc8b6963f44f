package weakcache

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

type target struct{ n int }

func (c *Cache[K, V]) len() int {
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	return n
}

func TestGetMakesOncePerTarget(t *testing.T) {
	var c Cache[target, string]
	calls := 0
	build := func(x *target) (string, error) { calls++; return strconv.Itoa(x.n), nil }
	a, b := &target{1}, &target{1}
	for range 3 {
		if v, err := c.Get(a, build); v != "1" || err != nil {
			t.Fatalf("Get(a) = %q, %v", v, err)
		}
	}
	if calls != 1 {
		t.Fatalf("build called %d times for one target", calls)
	}
	if v, _ := c.Get(b, build); v != "1" || calls != 2 {
		t.Fatalf("an equal target at another address: %q after %d calls, want a second build", v, calls)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = c.Get(a, build) }); n != 0 {
		t.Fatalf("a hit allocates %.0f times", n)
	}
}

func TestGetKeepsNoError(t *testing.T) {
	var c Cache[target, int]
	bad := errors.New("bad")
	x := &target{}
	if _, err := c.Get(x, func(*target) (int, error) { return 0, bad }); err != bad {
		t.Fatalf("err %v, want build's", err)
	}
	if v, err := c.Get(x, func(*target) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("after an error: %d, %v; want a new build", v, err)
	}
}

func TestConcurrentFirstGetsAgree(t *testing.T) {
	var c Cache[target, *int]
	x := &target{}
	var wg sync.WaitGroup
	got := make([]*int, 8)
	for i := range got {
		wg.Go(func() {
			got[i], _ = c.Get(x, func(*target) (*int, error) { return new(int), nil })
		})
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("concurrent first calls returned different values")
		}
	}
}

func TestEntriesGoAwayWithTargets(t *testing.T) {
	var c Cache[target, int]
	for i := range 100 {
		_, _ = c.Get(&target{i}, func(x *target) (int, error) { return x.n, nil })
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard: GC clears them much sooner
	for c.len() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := c.len(); n > 0 {
		t.Fatalf("%d entries left after their targets died", n)
	}
}
