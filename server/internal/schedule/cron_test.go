package schedule

import (
	"testing"
	"time"
)

// Every form the spec lists, at the boundaries of every field.
func TestParseCronAcceptsTheSpecFormsAndBoundaries(t *testing.T) {
	valid := []string{
		"* * * * *",
		// minute 0-59
		"0 * * * *", "59 * * * *", "0-59 * * * *", "*/1 * * * *", "*/59 * * * *", "0,59 * * * *",
		// hour 0-23
		"* 0 * * *", "* 23 * * *", "* 0-23 * * *", "* */12 * * *", "* 0,12,23 * * *",
		// day 1-31
		"* * 1 * *", "* * 31 * *", "* * 1-31 * *", "* * */15 * *", "* * 1,15,31 * *",
		// month 1-12
		"* * * 1 *", "* * * 12 *", "* * * 1-12 * ", "* * * */3 *", "* * * 1,6,12 *",
		// weekday 0-7, 0 and 7 Sunday
		"* * * * 0", "* * * * 7", "* * * * 0-7", "* * * * 1-5", "* * * * 5-7", "* * * * 7-7", "* * * * 0,7", "* * * * */2",
		// mixed lists of values and ranges
		"0,30 8-18 1,15 1-12 0", "1-5,10,20-25 * * * *",
		// surrounding and repeated blanks are one separator
		"  0   3 * * *  ", "0\t3 * * *",
	}
	for _, expr := range valid {
		if _, err := ParseCron(expr); err != nil {
			t.Errorf("ParseCron(%q) = %v, want valid", expr, err)
		}
	}
}

func TestParseCronRejectsEverythingElse(t *testing.T) {
	invalid := []string{
		"", "   ", "* * * *", "* * * * * *", "0 0 * * * 2026",
		// out of range
		"60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 0 *", "* * * 13 *", "* * * * 8",
		"0-60 * * * *", "* * * 1-13 *", "* * * * 0-8",
		// reversed ranges, zero or missing steps
		"5-1 * * * *", "*/0 * * * *", "*/ * * * *", "1- * * * *", "-1 * * * *",
		// forms the spec does not list
		"@daily", "@every 5m", "0 0 ? * *", "0 0 L * *", "0 0 * * MON", "0 0 * JAN *", "MON * * * *",
		"1-10/2 * * * *", "5/10 * * * *", "*/x * * * *", "1,,2 * * * *", ",1 * * * *", "1, * * * *",
		"0 0 1W * *", "0 0 * * 1#2", "TZ=UTC 0 0 * * *", "CRON_TZ=Europe/Berlin 0 3 * * *", "+1 * * * *",
	}
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

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone %s: %v", name, err)
	}
	return loc
}

// nextRuns returns the n activations of expr in loc after from.
func nextRuns(t *testing.T, expr string, loc *time.Location, from time.Time, n int) []time.Time {
	t.Helper()
	s, err := ParseCronIn(expr, loc)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for range n {
		from = s.Next(from)
		out = append(out, from.UTC())
	}
	return out
}

func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// Next runs in a zone with daylight saving time keep the wall-clock time
// across both changes of the clocks.
func TestNextRunAcrossDaylightSavingChanges(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	newYork := mustZone(t, "America/New_York")
	cases := []struct {
		name string
		expr string
		loc  *time.Location
		from time.Time
		want []time.Time
	}{
		{
			// 29 March 2026: 02:00 CET becomes 03:00 CEST (UTC+1 → UTC+2).
			"03:00 Berlin across spring forward", "0 3 * * *", berlin, utc(2026, 3, 27, 12, 0),
			[]time.Time{utc(2026, 3, 28, 2, 0), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 1, 0)},
		},
		{
			// 25 October 2026: 03:00 CEST becomes 02:00 CET.
			"03:00 Berlin across fall back", "0 3 * * *", berlin, utc(2026, 10, 23, 12, 0),
			[]time.Time{utc(2026, 10, 24, 1, 0), utc(2026, 10, 25, 2, 0), utc(2026, 10, 26, 2, 0)},
		},
		{
			// 02:30 happens twice on 25 October: once.
			"02:30 Berlin runs once on the night the clocks go back", "30 2 * * *", berlin, utc(2026, 10, 23, 12, 0),
			[]time.Time{utc(2026, 10, 24, 0, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)},
		},
		{
			// 02:30 does not exist on 29 March: that day has no run.
			"02:30 Berlin is skipped on the night the clocks go forward", "30 2 * * *", berlin, utc(2026, 3, 27, 12, 0),
			[]time.Time{utc(2026, 3, 28, 1, 30), utc(2026, 3, 30, 0, 30)},
		},
		{
			// 8 March 2026 in New York: 02:00 EST becomes 03:00 EDT (UTC-5 → UTC-4).
			"weekly Sunday 04:00 New York across spring forward", "0 4 * * 0", newYork, utc(2026, 3, 1, 12, 0),
			[]time.Time{utc(2026, 3, 8, 8, 0), utc(2026, 3, 15, 8, 0)},
		},
		{
			"every 30 minutes in New York over fall back", "*/30 * * * *", newYork, utc(2026, 11, 1, 5, 0),
			// Every hour: 01:30 EDT, 01:00 and 01:30 EST (the repeated hour runs), 02:00 EST.
			[]time.Time{utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 0), utc(2026, 11, 1, 6, 30), utc(2026, 11, 1, 7, 0)},
		},
		{
			"01:30 New York runs once on the night the clocks go back", "30 1 * * *", newYork, utc(2026, 10, 31, 12, 0),
			[]time.Time{utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := nextRuns(t, c.expr, c.loc, c.from, len(c.want))
			for i := range c.want {
				if !got[i].Equal(c.want[i]) {
					t.Errorf("run %d = %v (%v local), want %v", i, got[i], got[i].In(c.loc), c.want[i])
				}
			}
		})
	}
}

func TestDetectScheduleType(t *testing.T) {
	cases := map[string]string{
		"0 3 * * *":    Daily,
		"30 23 * * *":  Daily,
		"0 4 * * 1":    Weekly,
		"0 4 * * 7":    Weekly,
		"*/5 * * * *":  Custom,
		"0 */2 * * *":  Custom,
		"0 3 1 * *":    Custom,
		"0 3 * * 1-5":  Custom,
		"0 3 * 1 *":    Custom,
		"0,30 3 * * *": Custom,
	}
	for expr, want := range cases {
		if got := DetectScheduleType(expr); got != want {
			t.Errorf("DetectScheduleType(%q) = %s, want %s", expr, got, want)
		}
	}
	if got, err := CheckScheduleType("", "0 3 * * *"); err != nil || got != Daily {
		t.Errorf("CheckScheduleType detected %q, %v", got, err)
	}
	if got, err := CheckScheduleType("custom", "0 3 * * *"); err != nil || got != Custom {
		t.Errorf("CheckScheduleType kept %q, %v", got, err)
	}
	if _, err := CheckScheduleType("hourly", "0 * * * *"); err == nil {
		t.Error("CheckScheduleType accepted hourly")
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-2 3,4 5 7", "0 4 * * 5-7", "59 23 31 12 7", "0-59/2 * * * *",
		"1,2-3,4 * * * *", "\x00 * * * *", "99999999999999999999 * * * *", "*/99999999999999999999 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseCron(expr)
		if (s == nil) == (err == nil) {
			t.Fatalf("ParseCron(%q) = %v, %v", expr, s, err)
		}
		if err != nil {
			if err != ErrInvalidCron {
				t.Fatalf("ParseCron(%q) error %v, want ErrInvalidCron", expr, err)
			}
			return
		}
		// An accepted expression has a next run (every field has a value in
		// range; a day like 31 February simply never matches).
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if next := s.Next(from); !next.IsZero() && !next.After(from) {
			t.Fatalf("ParseCron(%q).Next = %v, not after %v", expr, next, from)
		}
		_ = DetectScheduleType(expr)
	})
}
