package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// frame builds one frame of the engine's multiplexed stream.
func frame(stream byte, payload string) []byte {
	b := make([]byte, 8, 8+len(payload))
	b[0] = stream
	binary.BigEndian.PutUint32(b[4:], uint32(len(payload)))
	return append(b, payload...)
}

func frames(fs ...[]byte) []byte { return bytes.Join(fs, nil) }

// collect runs a splitter over input and returns the lines it emitted.
func collect(split func(io.Reader, func(LogLine) error) error, input []byte) ([]LogLine, error) {
	var lines []LogLine
	err := split(bytes.NewReader(input), func(l LogLine) error {
		lines = append(lines, l)
		return nil
	})
	return lines, err
}

func stdout(s string) LogLine { return LogLine{Stream: "stdout", Text: s} }
func stderr(s string) LogLine { return LogLine{Stream: "stderr", Text: s} }

func TestDemux(t *testing.T) {
	long := strings.Repeat("x", 2*maxLogLine+10)
	tests := []struct {
		name    string
		input   []byte
		want    []LogLine
		wantErr bool
	}{
		{name: "empty stream", input: nil, want: nil},
		{
			name:  "stdout and stderr interleaved",
			input: frames(frame(1, "out 1\n"), frame(2, "err 1\n"), frame(1, "out 2\nout 3\n"), frame(2, "err 2\n")),
			want:  []LogLine{stdout("out 1"), stderr("err 1"), stdout("out 2"), stdout("out 3"), stderr("err 2")},
		},
		{
			name:  "line split across two frames",
			input: frames(frame(1, "hel"), frame(1, "lo\n")),
			want:  []LogLine{stdout("hello")},
		},
		{
			name:  "split line does not absorb the other stream",
			input: frames(frame(1, "hel"), frame(2, "oops\n"), frame(1, "lo\n")),
			want:  []LogLine{stderr("oops"), stdout("hello")},
		},
		{
			name:  "final line without newline",
			input: frames(frame(1, "first\nlast")),
			want:  []LogLine{stdout("first"), stdout("last")},
		},
		{
			name:  "final partial lines of both streams",
			input: frames(frame(2, "e"), frame(1, "o")),
			want:  []LogLine{stdout("o"), stderr("e")},
		},
		{
			name:  "carriage return before newline is dropped",
			input: frames(frame(1, "dos\r\n")),
			want:  []LogLine{stdout("dos")},
		},
		{
			name:  "empty lines are kept",
			input: frames(frame(1, "\n\n")),
			want:  []LogLine{stdout(""), stdout("")},
		},
		{
			name:  "empty frame",
			input: frames(frame(1, ""), frame(1, "a\n")),
			want:  []LogLine{stdout("a")},
		},
		{
			name:  "stdin stream id counts as stdout",
			input: frames(frame(0, "in\n")),
			want:  []LogLine{stdout("in")},
		},
		{
			name:    "bad stream id",
			input:   frames(frame(1, "before\n"), frame(3, "x\n"), frame(1, "after\n")),
			want:    []LogLine{stdout("before")},
			wantErr: true,
		},
		{
			name:  "truncated header",
			input: frames(frame(1, "a\n"), []byte{1, 0, 0}),
			want:  []LogLine{stdout("a")},
		},
		{
			name:  "truncated payload keeps what arrived",
			input: frames(frame(1, "one\ntw"), frame(1, "o\nthree")[:8+4]),
			want:  []LogLine{stdout("one"), stdout("two"), stdout("th")},
		},
		{
			name:  "huge announced length",
			input: frames(frame(1, "a\n"), []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, []byte("short")),
			want:  []LogLine{stdout("a"), stdout("short")},
		},
		{
			name:  "line longer than maxLogLine is split",
			input: frames(frame(1, long[:1000]), frame(1, long[1000:]+"\nnext\n")),
			want:  []LogLine{stdout(long[:maxLogLine]), stdout(long[maxLogLine : 2*maxLogLine]), stdout(long[2*maxLogLine:]), stdout("next")},
		},
		{
			name:  "line of exactly maxLogLine is one line",
			input: frames(frame(1, long[:maxLogLine]), frame(1, "\nnext\n")),
			want:  []LogLine{stdout(long[:maxLogLine]), stdout("next")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(demux, tt.input)
			if (err != nil) != tt.wantErr {
				t.Errorf("demux error = %v, want error: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("demux lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDemuxReadsFramesSplitAcrossReads(t *testing.T) {
	input := frames(frame(1, "out\n"), frame(2, "err\n"), frame(1, "par"), frame(1, "tial\n"))
	var got []LogLine
	err := demux(iotest.OneByteReader(bytes.NewReader(input)), func(l LogLine) error {
		got = append(got, l)
		return nil
	})
	if err != nil {
		t.Fatalf("demux: %v", err)
	}
	want := []LogLine{stdout("out"), stderr("err"), stdout("partial")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("demux lines (-want +got):\n%s", diff)
	}
}

func TestDemuxStopsWhenCallbackFails(t *testing.T) {
	errStop := errors.New("stop")
	calls := 0
	err := demux(bytes.NewReader(frames(frame(1, "a\nb\n"), frame(1, "c\n"))), func(LogLine) error {
		calls++
		return errStop
	})
	if !errors.Is(err, errStop) || calls != 1 {
		t.Errorf("demux = %v after %d calls, want %v after 1", err, calls, errStop)
	}
}

func TestDemuxReturnsReadErrors(t *testing.T) {
	errBroken := errors.New("broken pipe")
	r := io.MultiReader(bytes.NewReader(frame(1, "a\npart")), iotest.ErrReader(errBroken))
	got, err := collect(func(_ io.Reader, fn func(LogLine) error) error { return demux(r, fn) }, nil)
	if !errors.Is(err, errBroken) {
		t.Errorf("demux error = %v, want %v", err, errBroken)
	}
	if diff := cmp.Diff([]LogLine{stdout("a"), stdout("part")}, got); diff != "" {
		t.Errorf("demux lines (-want +got):\n%s", diff)
	}
}

func TestSplitLines(t *testing.T) {
	long := strings.Repeat("y", 2*maxLogLine+10)
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"empty", "", nil},
		{"lines", "a\nb\n", []string{"a", "b"}},
		{"final line without newline", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"empty lines are kept", "\n\nx\n", []string{"", "", "x"}},
		{"line longer than maxLogLine is split", long + "\nnext\n",
			[]string{long[:maxLogLine], long[maxLogLine : 2*maxLogLine], long[2*maxLogLine:], "next"}},
		{"line longer than maxLogLine without newline", long,
			[]string{long[:maxLogLine], long[maxLogLine : 2*maxLogLine], long[2*maxLogLine:]}},
		{"line of exactly maxLogLine is one line", long[:maxLogLine] + "\nnext\n", []string{long[:maxLogLine], "next"}},
		{"line of exactly twice maxLogLine", long[:2*maxLogLine] + "\n\n", []string{long[:maxLogLine], long[maxLogLine : 2*maxLogLine], ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(func(r io.Reader, fn func(LogLine) error) error { return splitLines(r, "stdout", fn) }, []byte(tt.input))
			if err != nil {
				t.Fatalf("splitLines: %v", err)
			}
			var want []LogLine
			for _, s := range tt.want {
				want = append(want, stdout(s))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("splitLines (-want +got):\n%s", diff)
			}
		})
	}
}

// checkLines asserts the invariants of any splitter on any input: every
// line is bounded and of a known stream, and no text is invented.
func checkLines(t *testing.T, input []byte, lines []LogLine) {
	t.Helper()
	total := 0
	for _, l := range lines {
		if l.Stream != "stdout" && l.Stream != "stderr" {
			t.Fatalf("line of unknown stream %q", l.Stream)
		}
		if len(l.Text) > maxLogLine {
			t.Fatalf("line of %d bytes, longer than maxLogLine", len(l.Text))
		}
		total += len(l.Text)
	}
	if total > len(input) {
		t.Fatalf("emitted %d bytes of text from %d bytes of input", total, len(input))
	}
}

func FuzzDemux(f *testing.F) {
	f.Add(frames(frame(1, "out\n"), frame(2, "err\n")))
	f.Add(frames(frame(1, "hel"), frame(1, "lo\n"), frame(2, "x")))
	f.Add(frames(frame(1, "a\r\n"), frame(0, "\n")))
	f.Add(frames(frame(1, "a"), frame(3, "b")))
	f.Add([]byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'a'})
	f.Add([]byte{2, 0, 0})
	f.Add(frame(1, strings.Repeat("z", maxLogLine+1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, _ := collect(demux, data)
		checkLines(t, data, lines)
	})
}

func FuzzSplitLines(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"))
	f.Add([]byte("\n\n\r\n"))
	f.Add([]byte(strings.Repeat("z", maxLogLine) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := collect(func(r io.Reader, fn func(LogLine) error) error { return splitLines(r, "stdout", fn) }, data)
		if err != nil {
			t.Fatalf("splitLines: %v", err)
		}
		checkLines(t, data, lines)
	})
}
