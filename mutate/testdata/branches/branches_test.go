package branches

import "testing"

func TestAbs(t *testing.T) {
	if Abs(-2) != 2 || Abs(3) != 3 {
		t.Fatal("Abs")
	}
}

func TestStore(t *testing.T) {
	var s Store
	s.Set(2)
	if !s.mu.TryLock() {
		t.Fatal("still locked after Set")
	}
	s.mu.Unlock()
	if s.Get() != 2 {
		t.Fatal("Get")
	}
	if !s.mu.TryLock() {
		t.Fatal("still locked after Get")
	}
}
