package engine_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// findNetwork returns the listed network with the given id.
func findNetwork(t *testing.T, c *engine.Client, id string) engine.Network {
	t.Helper()
	list, err := c.ListNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list {
		if n.Labels == nil || n.Options == nil || n.Containers == nil || n.IPAM.Config == nil {
			t.Errorf("network %s lists nil maps or lists: %+v", n.Name, n)
		}
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("network %s not listed", id)
	return engine.Network{}
}

func TestNetworkLifecycle(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	name := "berth-net-" + label
	// 10.198.X.0/24: outside the engine's default pools; the API tests use 10.199.
	subnet := fmt.Sprintf("10.198.%d.0/24", rand.IntN(256))
	prefix := netip.MustParsePrefix(subnet)
	gateway := prefix.Addr().Next().String()
	id, err := c.CreateNetwork(t.Context(), engine.NetworkSpec{
		Name: name, Driver: "bridge", Labels: map[string]string{enginetest.Label: label},
		IPAM: []engine.IPAMConfig{{Subnet: subnet, Gateway: gateway}},
	})
	if err != nil {
		t.Fatal(err)
	}

	// By name, the same network as by id.
	raw, byName, err := c.InspectNetwork(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if byName.ID != id || len(raw) == 0 {
		t.Fatalf("inspect by name: id %s, want %s", byName.ID, id)
	}
	wantIPAM := engine.IPAM{Driver: "default", Config: []engine.IPAMConfig{{Subnet: subnet, Gateway: gateway}}}
	if diff := cmp.Diff(wantIPAM, byName.IPAM); diff != "" {
		t.Errorf("IPAM (-want +got):\n%s", diff)
	}

	// A second network of the name is refused; there is still one.
	if _, err := c.CreateNetwork(t.Context(), engine.NetworkSpec{Name: name, Labels: map[string]string{enginetest.Label: label}}); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("duplicate create = %v, want ErrConflict", err)
	}
	list, err := c.ListNetworks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, n := range list {
		if n.Name == name {
			same++
		}
	}
	if same != 1 {
		t.Errorf("%d networks named %s, want 1", same, name)
	}

	// A running container on it is listed with its address, as the engine's
	// own inspection shows it.
	cid := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}, NetworkMode: name})
	listed := findNetwork(t, c, id)
	ep, ok := listed.Containers[cid]
	if !ok {
		t.Fatalf("container %s not listed on the network: %+v", cid, listed.Containers)
	}
	addr, err := netip.ParsePrefix(ep.IPv4Address)
	if err != nil || !prefix.Contains(addr.Addr()) || addr.Bits() != 24 || ep.Name == "" {
		t.Errorf("listed endpoint = %+v, want an address in %s with /24 and the container name", ep, subnet)
	}
	_, inspected, err := c.InspectNetwork(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inspected.Containers, listed.Containers); diff != "" {
		t.Errorf("listed containers differ from the inspection (-inspect +list):\n%s", diff)
	}

	if err := c.ConnectNetwork(t.Context(), id, cid); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("connect of an attached container = %v, want ErrConflict", err)
	}
	if err := c.RemoveNetwork(t.Context(), id); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("remove with an attached container = %v, want ErrConflict", err)
	}
	if err := c.DisconnectNetwork(t.Context(), id, cid, false); err != nil {
		t.Fatal(err)
	}
	if n := findNetwork(t, c, id); len(n.Containers) != 0 {
		t.Errorf("containers after disconnect: %+v", n.Containers)
	}
	if err := c.DisconnectNetwork(t.Context(), id, cid, false); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("disconnect of a detached container = %v, want ErrConflict", err)
	}
	if err := c.ConnectNetwork(t.Context(), id, "berth-no-such-container-"+label); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("connect of an unknown container = %v, want ErrNotFound", err)
	}
	if err := c.ConnectNetwork(t.Context(), id, cid); err != nil {
		t.Errorf("reconnect: %v", err)
	}
	if err := c.DisconnectNetwork(t.Context(), id, cid, true); err != nil {
		t.Errorf("forced disconnect: %v", err)
	}
	if err := c.RemoveNetwork(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.InspectNetwork(t.Context(), id); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("inspect after remove = %v, want ErrNotFound", err)
	}
}

func TestPredefinedNetworksAreInvalidToRemove(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	for _, name := range []string{"bridge", "host", "none"} {
		if err := c.RemoveNetwork(t.Context(), name); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("remove %s = %v, want ErrInvalid", name, err)
		}
	}
}
