package schedule

import (
	"testing"
	"time"
)

func TestParseCronAcceptsTheSpecFormsOnly(t *testing.T) {
	valid := []string{"* * * * *", "*/5 * * * *", "0 3 * * 1-5", "0,30 8-18 1,15 1-12 0", "0 4 * * 7", "0 4 * * 5-7", "59 23 31 12 6", "0 4 * * 7,7", "0 4 * * 7-7"}
	for _, expr := range valid {
		if _, err := ParseCron(expr); err != nil {
			t.Errorf("ParseCron(%q) = %v, want valid", expr, err)
		}
	}
	invalid := []string{"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
		"@daily", "0 0 ? * *", "0 0 L * *", "MON * * * *", "*/x * * * *", "1-  * * * *"}
	for _, expr := range invalid {
		if _, err := ParseCron(expr); err != ErrInvalidCron {
			t.Errorf("ParseCron(%q) = %v, want ErrInvalidCron", expr, err)
		}
	}
}

func TestParseCronTreatsSevenAsSunday(t *testing.T) {
	s, err := ParseCron("0 4 * * 7")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) // a Monday
	if got, want := s.Next(from), time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next = %v, want Sunday %v", got, want)
	}
	s, _ = ParseCron("0 4 * * 6-7")
	if got, want := s.Next(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)), time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("6-7 next after Sunday = %v, want Saturday %v", got, want)
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-2 3,4 5 7", "0 4 * * 5-7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseCron(expr)
		if (s == nil) == (err == nil) {
			t.Fatalf("ParseCron(%q) = %v, %v", expr, s, err)
		}
	})
}
