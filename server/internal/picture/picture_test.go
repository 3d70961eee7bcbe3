package picture

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
)

func encoded(t testing.TB, w, h int, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := enc(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pngOf(t testing.TB, w, h int) []byte {
	return encoded(t, w, h, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
}

func TestCheckTellsTheTypeByContent(t *testing.T) {
	webp := append([]byte("RIFF\x1a\x00\x00\x00WEBPVP8 "), make([]byte, 14)...)
	jpg := encoded(t, 8, 8, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) })
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"png", pngOf(t, 8, 8), PNG},
		{"jpeg", jpg, JPEG},
		{"webp", webp, WebP},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><circle r="2"/></svg>`), SVG},
		{"svg with prolog and comment", []byte("\ufeff<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg><g><path d=\"M0 0\"/></g></svg>"), SVG},
	} {
		got, err := Check(tc.data)
		if err != nil || got != tc.want {
			t.Errorf("%s: Check = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestCheckRefusesWhatIsNotASmallSafePicture(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "empty"},
		{"too large", append(pngOf(t, 1, 1), make([]byte, MaxSize)...), "larger than 512 KB"},
		{"gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "must be a PNG"},
		{"text", []byte("just text"), "must be a PNG"},
		{"html", []byte("<html><svg></svg></html>"), "must be a PNG"},
		{"huge png", pngOf(t, MaxDimension+1, 1), "4096"},
		{"broken png", pngOf(t, 4, 4)[:24], "cannot be read"},
		{"script", []byte(`<svg><script>alert(1)</script></svg>`), "scripts"},
		{"foreignObject", []byte(`<svg><foreignObject><div/></foreignObject></svg>`), "scripts"},
		{"handler", []byte(`<svg><rect onclick="x()"/></svg>`), "event handlers"},
		{"javascript link", []byte(`<svg><a href=" JavaScript:alert(1)"><text>x</text></a></svg>`), "scripts"},
		{"unclosed svg", []byte(`<svg><rect>`), "cannot be read"},
	} {
		got, err := Check(tc.data)
		var f *fault.Error
		if err == nil || !errors.As(err, &f) || f.Kind != fault.Invalid || !strings.Contains(f.Message, tc.msg) {
			t.Errorf("%s: Check = %q, %v; want a 400 with %q", tc.name, got, err, tc.msg)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(pngOf(f, 2, 2))
	f.Add([]byte(`<svg><rect/></svg>`))
	f.Add([]byte(`<svg onload="x"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ct, err := Check(data)
		if err != nil {
			if _, ok := fault.As(err); !ok {
				t.Fatalf("Check error %v is not a fault", err)
			}
			return
		}
		switch ct {
		case PNG, JPEG, WebP, SVG:
			if len(data) == 0 || len(data) > MaxSize {
				t.Fatalf("%d bytes accepted", len(data))
			}
		default:
			t.Fatalf("content type %q", ct)
		}
	})
}
