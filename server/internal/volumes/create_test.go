package volumes

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		wantMsg string // "" when valid
	}{
		{"", msgNameRequired},
		{"ab", ""},
		{"db-data", ""},
		{"My_Volume.v2", ""},
		{"0starts-with-digit", ""},
		{strings.Repeat("v", MaxNameLen), ""},
		{"a", msgInvalidName}, // the local driver wants two characters
		{"-x", msgInvalidName},
		{"_x", msgInvalidName},
		{".x", msgInvalidName},
		{"bad name", msgInvalidName},
		{"a/b", msgInvalidName},
		{"../etc", msgInvalidName},
		{"tab\there", msgInvalidName},
		{"ümlaut", msgInvalidName},
		{"x:y", msgInvalidName},
		{strings.Repeat("v", MaxNameLen+1), msgInvalidName},
		{strings.Repeat("v", 300), msgInvalidName},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if tt.wantMsg == "" {
			if err != nil {
				t.Errorf("ValidateName(%.20q) = %v, want valid", tt.name, err)
			}
			continue
		}
		f, ok := fault.As(err)
		if !ok || f.Kind != fault.Invalid || f.Message != tt.wantMsg {
			t.Errorf("ValidateName(%.20q) = %v, want Invalid %q", tt.name, err, tt.wantMsg)
		}
	}
}

func TestCreateSpecDefaultsAndLocalOptions(t *testing.T) {
	sp := CreateSpec{Name: "  data  "}
	if err := sp.validate(); err != nil {
		t.Fatal(err)
	}
	if sp.Name != "data" || sp.Driver != "local" {
		t.Errorf("after validate: %+v, want the name trimmed and the local driver", sp)
	}
	tests := []struct {
		driver  string
		opts    map[string]string
		wantErr string
	}{
		{"local", map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}, ""},
		{"", map[string]string{"type": "none", "device": "/srv/data", "o": "bind"}, ""},
		{"local", map[string]string{"foo": "bar", "device": "x"}, `Invalid driver option "foo"`},
		{"local", map[string]string{"type": "tmpfs"}, "needs the device option"},
		{"local", map[string]string{"o": "size=1m", "device": ""}, "needs the device option"},
		{"some-plugin", map[string]string{"foo": "bar"}, ""}, // other drivers judge their own options
	}
	for _, tt := range tests {
		sp := CreateSpec{Name: "data", Driver: tt.driver, DriverOpts: tt.opts}
		err := sp.validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("driver %q opts %v: %v, want valid", tt.driver, tt.opts, err)
		case tt.wantErr != "" && (err == nil || fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("driver %q opts %v: %v, want Invalid containing %q", tt.driver, tt.opts, err, tt.wantErr)
		}
	}
}
