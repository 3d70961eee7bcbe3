package edge

import (
	"testing"
	"time"
)

func TestBackoffGrowsExponentiallyWithFullJitter(t *testing.T) {
	lo, hi := time.Second, time.Minute
	top := func() float64 { return 0.999999 }
	bottom := func() float64 { return 0 }
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		if got := Backoff(n, lo, hi, top); got > want || got < want*99/100 {
			t.Errorf("Backoff(%d) with the largest draw = %v, want just under %v", n, got, want)
		}
	}
	if got := Backoff(5, lo, hi, bottom); got != lo/10 {
		t.Errorf("Backoff with the smallest draw = %v, want the floor %v", got, lo/10)
	}
	if got := Backoff(200, lo, hi, top); got > hi {
		t.Errorf("Backoff(200) = %v, above the cap %v", got, hi)
	}
}

func TestServerURLsBecomeTargets(t *testing.T) {
	for url, want := range map[string]string{
		"http://127.0.0.1:3001":       "127.0.0.1:3001",
		"https://berth.example.com":   "berth.example.com:443",
		"http://berth.example.com":    "berth.example.com:80",
		"https://[::1]:3001/whatever": "[::1]:3001",
	} {
		got, _, err := dialTarget(Config{Server: url})
		if err != nil || got != want {
			t.Errorf("dialTarget(%q) = %q, %v; want %q", url, got, err, want)
		}
	}
	for _, bad := range []string{"berth.example.com:3001", "ftp://x:1", ""} {
		if _, _, err := dialTarget(Config{Server: bad}); err == nil {
			t.Errorf("dialTarget(%q) accepted it", bad)
		}
	}
}
