package api_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// networkJSON is the network list item of COMPAT.md.
type networkJSON struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Driver     string `json:"driver"`
	Scope      string `json:"scope"`
	Internal   bool   `json:"internal"`
	Attachable bool   `json:"attachable"`
	IPAM       *struct {
		Driver string `json:"driver"`
		Config []struct {
			Subnet  string `json:"subnet"`
			Gateway string `json:"gateway"`
		} `json:"config"`
	} `json:"ipam"`
	Containers *map[string]struct {
		Name        string `json:"name"`
		IPv4Address string `json:"ipv4Address"`
	} `json:"containers"`
	CreatedAt string `json:"createdAt"`
}

// listedNetwork returns the listed network with the given id.
func (h *harness) listedNetwork(id string) networkJSON {
	h.t.Helper()
	var list []networkJSON
	h.must(200, "GET", "/api/networks?env=1", nil, &list)
	for _, n := range list {
		if n.IPAM == nil || n.IPAM.Config == nil || n.Containers == nil {
			h.t.Errorf("network %s lists a null ipam, config or containers", n.Name)
		}
		if n.ID == id {
			return n
		}
	}
	h.t.Fatalf("network %s not listed", id)
	return networkJSON{}
}

func TestNetworkCreateListConnectDisconnectDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-net-" + h.label
	// 10.199.X.0/24: outside the engine's default pools; the engine tests use 10.198.
	subnet := netip.MustParsePrefix(fmt.Sprintf("10.199.%d.0/24", rand.IntN(256)))
	gateway := subnet.Addr().Next().String()
	var created struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
	}
	h.must(200, "POST", "/api/networks?env=1", map[string]any{
		"name": name, "attachable": true, "labels": map[string]string{enginetest.Label: h.label},
		"ipam": map[string]any{"config": []map[string]string{{"subnet": subnet.String(), "gateway": gateway}}},
	}, &created)
	if !created.Success || len(created.ID) != 64 {
		t.Fatalf("create = %+v", created)
	}

	n := h.listedNetwork(created.ID)
	if n.Name != name || n.Driver != "bridge" || n.Scope != "local" || n.Internal || !n.Attachable || n.CreatedAt == "" {
		t.Errorf("listed = %+v", n)
	}
	if len(n.IPAM.Config) != 1 || n.IPAM.Config[0].Subnet != subnet.String() || n.IPAM.Config[0].Gateway != gateway {
		t.Errorf("ipam = %+v, want subnet %s gateway %s", n.IPAM, subnet, gateway)
	}
	if len(*n.Containers) != 0 {
		t.Errorf("containers of a new network = %v", *n.Containers)
	}

	// Inspect by name answers the engine's document of the same network.
	var doc struct {
		ID   string `json:"Id"`
		Name string `json:"Name"`
	}
	h.must(200, "GET", "/api/networks/"+name+"?env=1", nil, &doc)
	if doc.ID != created.ID || doc.Name != name {
		t.Errorf("inspect by name = %+v", doc)
	}
	h.must(200, "GET", "/api/networks/"+created.ID+"/inspect?env=1", nil, &doc)
	if doc.ID != created.ID {
		t.Errorf("inspect by id = %+v", doc)
	}

	cname := "berth-netc-" + h.label
	cid := h.createContainer(cname, true, "sleep", "300")
	connect := "/api/networks/" + created.ID + "/connect?env=1"
	disconnect := "/api/networks/" + name + "/disconnect?env=1"
	var ok map[string]bool
	h.must(200, "POST", connect, map[string]string{"containerName": cname}, &ok) // the reference's field
	if !ok["success"] {
		t.Errorf("connect = %v", ok)
	}
	ep, found := (*h.listedNetwork(created.ID).Containers)[cid]
	addr, err := netip.ParsePrefix(ep.IPv4Address)
	if !found || err != nil || !subnet.Contains(addr.Addr()) || ep.Name != cname {
		t.Errorf("listed container = %+v (found %v), want %s with an address in %s", ep, found, cname, subnet)
	}

	var e errorJSON
	h.must(409, "POST", connect, map[string]string{"containerId": cid}, &e)
	if e.Error != "Container is already connected to this network" {
		t.Errorf("second connect = %+v", e)
	}
	e = errorJSON{}
	h.must(409, "DELETE", "/api/networks/"+created.ID+"?env=1", nil, &e)
	if e.Error != "Network is in use" || !strings.Contains(e.Details, cname) {
		t.Errorf("delete of a network in use = %+v", e)
	}
	h.listedNetwork(created.ID) // still there

	h.must(200, "POST", disconnect, map[string]string{"containerName": cname}, nil)
	if cs := *h.listedNetwork(created.ID).Containers; len(cs) != 0 {
		t.Errorf("containers after disconnect = %v", cs)
	}
	e = errorJSON{}
	h.must(409, "POST", disconnect, map[string]string{"containerId": cid}, &e)
	if e.Error != "Container is not connected to this network" {
		t.Errorf("second disconnect = %+v", e)
	}

	h.must(200, "DELETE", "/api/networks/"+name+"?env=1", nil, &ok)
	e = errorJSON{}
	h.must(404, "GET", "/api/networks/"+created.ID+"?env=1", nil, &e)
	if e.Error != "Network not found" {
		t.Errorf("inspect after delete = %+v", e)
	}
}

func TestNetworkBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-nbad-" + h.label
	labels := map[string]string{enginetest.Label: h.label}
	h.must(200, "POST", "/api/networks?env=1", map[string]any{"name": name, "labels": labels}, nil)
	cid := h.createContainer("berth-nbadc-"+h.label, false, "true")

	tests := []struct {
		method, path string
		body         any
		want         int
		wantError    string
	}{
		{"POST", "/api/networks", map[string]any{}, 400, "Network name is required"},
		{"POST", "/api/networks", map[string]any{"name": "bad name"}, 400, "Invalid network name: use letters, digits, '_', '.' or '-', starting with a letter or digit"},
		{"POST", "/api/networks", map[string]any{"name": name, "labels": labels}, 409, "A network with this name already exists"},
		{"POST", "/api/networks", map[string]any{"name": "berth-x-" + h.label, "ipam": map[string]any{"config": []map[string]string{{"subnet": "10.0.0.0"}}}}, 400, `Invalid subnet "10.0.0.0": use CIDR notation such as 172.30.0.0/16`},
		{"POST", "/api/networks", map[string]any{"name": "berth-x-" + h.label, "ipam": map[string]any{"config": []map[string]string{{"subnet": "10.197.0.0/24", "gateway": "10.196.0.1"}}}}, 400, "Gateway 10.196.0.1 is not in subnet 10.197.0.0/24"},
		{"DELETE", "/api/networks/bridge", nil, 400, "Cannot remove a built-in network"},
		{"DELETE", "/api/networks/host", nil, 400, "Cannot remove a built-in network"},
		{"DELETE", "/api/networks/none", nil, 400, "Cannot remove a built-in network"},
		{"DELETE", "/api/networks/berth-no-such-network-" + h.label, nil, 404, "Network not found"},
		{"GET", "/api/networks/berth-no-such-network-" + h.label, nil, 404, "Network not found"},
		{"POST", "/api/networks/" + name + "/connect", map[string]any{}, 400, "Container ID is required"},
		{"POST", "/api/networks/" + name + "/disconnect", map[string]any{"containerId": " "}, 400, "Container ID is required"},
		{"POST", "/api/networks/" + name + "/connect", map[string]any{"containerId": "berth-no-such-container-" + h.label}, 404, "Container not found"},
		{"POST", "/api/networks/berth-no-such-network-" + h.label + "/connect", map[string]any{"containerId": cid}, 404, "Network not found"},
		{"POST", "/api/networks/" + name + "/connect", `{"containerId":`, 400, "Invalid JSON body"},
	}
	for _, tt := range tests {
		var e errorJSON
		h.must(tt.want, tt.method, tt.path+"?env=1", tt.body, &e)
		if e.Error != tt.wantError {
			t.Errorf("%s %s: error %q, want %q", tt.method, tt.path, e.Error, tt.wantError)
		}
	}

	// The built-in bridge by id is refused as well; nothing was removed.
	var list []networkJSON
	h.must(200, "GET", "/api/networks?env=1", nil, &list)
	builtIn := map[string]string{}
	for _, n := range list {
		builtIn[n.Name] = n.ID
	}
	for _, b := range []string{"bridge", "host", "none"} {
		if builtIn[b] == "" {
			t.Fatalf("built-in network %s is not listed", b)
		}
	}
	var e errorJSON
	h.must(400, "DELETE", "/api/networks/"+builtIn["bridge"]+"?env=1", nil, &e)
	if e.Error != "Cannot remove a built-in network" {
		t.Errorf("delete bridge by id = %+v", e)
	}
}

// The reference's enableIPv6 makes an IPv6 network; ingress (the swarm's
// routing mesh) reaches the engine, which refuses it outside a swarm.
func TestNetworkCreateReadsEnableIPv6AndIngress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-net6-" + h.label
	subnet := fmt.Sprintf("fd%02x:%x::/64", rand.IntN(256), rand.IntN(65536))
	var created struct{ ID string }
	h.must(200, "POST", "/api/networks?env=1", map[string]any{
		"name": name, "enableIPv6": true, "labels": map[string]string{enginetest.Label: h.label},
		"ipam": map[string]any{"config": []map[string]string{{"subnet": subnet}}},
	}, &created)
	var doc struct{ EnableIPv6 bool }
	h.must(200, "GET", "/api/networks/"+created.ID+"?env=1", nil, &doc)
	if !doc.EnableIPv6 {
		t.Errorf("network created with enableIPv6: EnableIPv6 = false")
	}
	status, body := h.do("POST", "/api/networks?env=1", map[string]any{
		"name": "berth-ingress-" + h.label, "ingress": true, "labels": map[string]string{enginetest.Label: h.label}})
	if status == 200 {
		t.Errorf("an ingress network outside a swarm = 200 %s: the field was ignored", body)
	}
}
