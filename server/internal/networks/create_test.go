package networks

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

func TestValidateName(t *testing.T) {
	valid := []string{"a", "app_default", "front-end", "net.v2", "0net", strings.Repeat("n", MaxNameLen)}
	for _, name := range valid {
		if err := ValidateName(name); err != nil {
			t.Errorf("ValidateName(%.20q) = %v, want valid", name, err)
		}
	}
	if err := ValidateName(""); err == nil || err.Error() != "Network name is required" {
		t.Errorf(`ValidateName("") = %v`, err)
	}
	invalid := []string{"-net", "_net", ".net", "my net", "a/b", "x:y", strings.Repeat("n", MaxNameLen+1)}
	for _, name := range invalid {
		if err := ValidateName(name); fault.KindOf(err) != fault.Invalid || err.Error() != msgInvalidName {
			t.Errorf("ValidateName(%.20q) = %v, want %q", name, err, msgInvalidName)
		}
	}
}

func TestCreateSpecValidation(t *testing.T) {
	sp := CreateSpec{Name: " net "}
	if err := sp.validate(); err != nil || sp.Name != "net" || sp.Driver != "bridge" {
		t.Fatalf("defaults: %+v, %v", sp, err)
	}
	tests := []struct {
		pool    engine.IPAMConfig
		wantErr string // "" when valid
	}{
		{engine.IPAMConfig{Subnet: "172.30.0.0/16"}, ""},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", Gateway: "172.30.0.1", IPRange: "172.30.5.0/24"}, ""},
		{engine.IPAMConfig{Subnet: "fd00:1::/64", Gateway: "fd00:1::1"}, ""},
		{engine.IPAMConfig{Subnet: "172.30.0.0"}, `Invalid subnet "172.30.0.0"`},
		{engine.IPAMConfig{Subnet: "nonsense/16"}, "Invalid subnet"},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", Gateway: "172.30.0.300"}, "Invalid gateway"},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", Gateway: "10.0.0.1"}, "is not in subnet"},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", IPRange: "172.31.0.0/24"}, "is not in subnet"},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", IPRange: "172.0.0.0/8"}, "is not in subnet"},
		{engine.IPAMConfig{Subnet: "172.30.0.0/16", IPRange: "bad"}, "Invalid IP range"},
		{engine.IPAMConfig{Gateway: "172.30.0.1"}, "needs a subnet"},
	}
	for _, tt := range tests {
		sp := CreateSpec{Name: "net", IPAM: []engine.IPAMConfig{tt.pool}}
		err := sp.validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tt.pool, err)
		case tt.wantErr != "" && (fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%+v: %v, want Invalid containing %q", tt.pool, err, tt.wantErr)
		}
	}
}
