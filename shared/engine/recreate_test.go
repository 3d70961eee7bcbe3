package engine

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// What the old image set is left to the new image; what the container set
// itself stays.
func TestInheritFromImageKeepsOnlyTheContainersOwnSettings(t *testing.T) {
	img := &dockerspec.DockerOCIImageConfig{ImageConfig: ocispec.ImageConfig{
		Cmd: []string{"serve"}, Entrypoint: []string{"/entry"}, WorkingDir: "/app", User: "app",
		Env: []string{"PATH=/bin", "MODE=prod"}, Labels: map[string]string{"version": "1", "vendor": "x"},
		ExposedPorts: map[string]struct{}{"80/tcp": {}}, Volumes: map[string]struct{}{"/data": {}}, StopSignal: "SIGQUIT",
	}}
	p80, _ := network.ParsePort("80/tcp")
	p9000, _ := network.ParsePort("9000/tcp")
	conf := container.Config{Cmd: []string{"serve", "--debug"}, Entrypoint: []string{"/entry"}, WorkingDir: "/app", User: "root",
		Env: []string{"PATH=/bin", "MODE=dev", "TOKEN=t"}, Labels: map[string]string{"version": "1", "vendor": "mine", "role": "web"},
		ExposedPorts: network.PortSet{p80: {}, p9000: {}}, Volumes: map[string]struct{}{"/data": {}, "/cache": {}}, StopSignal: "SIGQUIT"}
	inheritFromImage(&conf, img)
	want := container.Config{Cmd: []string{"serve", "--debug"}, User: "root", Env: []string{"MODE=dev", "TOKEN=t"},
		Labels: map[string]string{"vendor": "mine", "role": "web"}, ExposedPorts: network.PortSet{p9000: {}},
		Volumes: map[string]struct{}{"/cache": {}}}
	if diff := cmp.Diff(want, conf); diff != "" {
		t.Errorf("inherited (-want +got):\n%s", diff)
	}
}

func TestEndpointLikeDropsTheOldIDAndOperationalData(t *testing.T) {
	id := "0123456789abcdef0123456789abcdef"
	ep := &network.EndpointSettings{Aliases: []string{"web", "0123456789ab", id}, Links: []string{"db:db"},
		IPAMConfig: &network.EndpointIPAMConfig{}, NetworkID: "n1", EndpointID: "e1", DNSNames: []string{"web"}}
	got := endpointLike(ep, "app-net", id)
	want := &network.EndpointSettings{Aliases: []string{"web"}, Links: []string{"db:db"}, IPAMConfig: &network.EndpointIPAMConfig{}}
	if diff := cmp.Diff(want, got, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("endpoint (-want +got):\n%s", diff)
	}
	if got := endpointLike(ep, "bridge", id); got.Aliases != nil {
		t.Errorf("aliases on the default bridge: %v", got.Aliases)
	}
}

// Volumes the engine made for the image's VOLUME entries are mounted again
// by name; binds and explicit mounts are already in the configuration.
func TestAnonymousVolumesAreMountedByName(t *testing.T) {
	in := container.InspectResponse{
		HostConfig: &container.HostConfig{Binds: []string{"named:/named", "/host:/bind:ro"},
			Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: "explicit", Target: "/explicit"}}},
		Mounts: []container.MountPoint{
			{Type: mount.TypeVolume, Name: "named", Destination: "/named", RW: true},
			{Type: mount.TypeBind, Source: "/host", Destination: "/bind"},
			{Type: mount.TypeVolume, Name: "explicit", Destination: "/explicit", RW: true},
			{Type: mount.TypeVolume, Name: "4f3e", Destination: "/data", RW: true},
			{Type: mount.TypeVolume, Name: "9a8b", Destination: "/ro", RW: false},
		},
	}
	want := []mount.Mount{{Type: mount.TypeVolume, Source: "4f3e", Target: "/data"},
		{Type: mount.TypeVolume, Source: "9a8b", Target: "/ro", ReadOnly: true}}
	if diff := cmp.Diff(want, anonymousVolumes(in)); diff != "" {
		t.Errorf("anonymous volumes (-want +got):\n%s", diff)
	}
}
