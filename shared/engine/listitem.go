package engine

import "strings"

// listItem is the part of an entry of the engine's container list that a
// Container holds: decoding only these fields (as strings where the SDK
// parses addresses) is most of a list's cost saved. listDecoder reads it
// (listdecode.go), encoding/json where listDecoder gives up.
type listItem struct {
	ID              string            `json:"Id"`
	Names           []string          `json:"Names"`
	Image           string            `json:"Image"`
	ImageID         string            `json:"ImageID"`
	Command         string            `json:"Command"`
	Created         int64             `json:"Created"`
	Ports           []listPort        `json:"Ports"`
	Labels          map[string]string `json:"Labels"`
	State           string            `json:"State"`
	Status          string            `json:"Status"`
	Health          *listHealth       `json:"Health"`
	NetworkSettings *listSettings     `json:"NetworkSettings"`
	Mounts          []listMount       `json:"Mounts"`
}

type listPort struct {
	IP          string `json:"IP"`
	PrivatePort int    `json:"PrivatePort"`
	PublicPort  int    `json:"PublicPort"`
	Type        string `json:"Type"`
}

type listHealth struct {
	Status string `json:"Status"`
}

type listSettings struct {
	Networks map[string]*listEndpoint `json:"Networks"`
}

type listEndpoint struct {
	IPAddress string `json:"IPAddress"`
}

type listMount struct {
	Type        string `json:"Type"`
	Name        string `json:"Name"`
	Source      string `json:"Source"`
	Destination string `json:"Destination"`
	Mode        string `json:"Mode"`
	RW          bool   `json:"RW"`
}

func (s *listItem) container() Container {
	c := Container{
		ID:       s.ID,
		Image:    s.Image,
		ImageID:  s.ImageID,
		State:    s.State,
		Status:   s.Status,
		Created:  s.Created,
		Labels:   s.Labels,
		Command:  s.Command,
		Ports:    make([]Port, 0, len(s.Ports)),
		Networks: map[string]NetIP{},
		Mounts:   make([]Mount, 0, len(s.Mounts)),
	}
	if len(s.Names) > 0 {
		c.Name = strings.TrimPrefix(s.Names[0], "/")
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	for _, p := range s.Ports {
		c.Ports = append(c.Ports, Port{IP: canonicalIP(p.IP), PrivatePort: p.PrivatePort, PublicPort: p.PublicPort, Type: p.Type})
	}
	if s.NetworkSettings != nil {
		for name, ep := range s.NetworkSettings.Networks {
			ip := ""
			if ep != nil {
				ip = canonicalIP(ep.IPAddress)
			}
			c.Networks[name] = NetIP{IPAddress: ip}
		}
	}
	for _, m := range s.Mounts {
		c.Mounts = append(c.Mounts, Mount(m))
	}
	if s.Health != nil {
		c.Health = s.Health.Status
	} else {
		c.Health = healthFromStatus(s.Status)
	}
	c.ExitCode = exitCodeFromStatus(s.State, s.Status)
	return c
}

// The names of the members listDecoder reads, object by object.
var (
	itemFields  = []string{"Id", "Names", "Image", "ImageID", "Command", "Created", "Ports", "Labels", "State", "Status", "Health", "NetworkSettings", "Mounts"}
	portFields  = []string{"IP", "PrivatePort", "PublicPort", "Type"}
	mountFields = []string{"Type", "Name", "Source", "Destination", "Mode", "RW"}
)

// item reads one entry of the list.
func (d *listDecoder) item(it *listItem) {
	var seen uint16
	for more := d.members(); more && !d.bad; more = d.next('}') {
		switch k := d.key(); string(k) {
		case "Id":
			d.once(&seen, 1<<0)
			d.str(&it.ID)
		case "Names":
			d.once(&seen, 1<<1)
			d.strings(&it.Names)
		case "Image":
			d.once(&seen, 1<<2)
			d.str(&it.Image)
		case "ImageID":
			d.once(&seen, 1<<3)
			d.str(&it.ImageID)
		case "Command":
			d.once(&seen, 1<<4)
			d.str(&it.Command)
		case "Created":
			d.once(&seen, 1<<5)
			d.int64(&it.Created)
		case "Ports":
			d.once(&seen, 1<<6)
			it.Ports = listOf(d, it.Ports, (*listDecoder).port)
		case "Labels":
			d.once(&seen, 1<<7)
			d.labels(&it.Labels)
		case "State":
			d.once(&seen, 1<<8)
			d.str(&it.State)
		case "Status":
			d.once(&seen, 1<<9)
			d.str(&it.Status)
		case "Health":
			d.once(&seen, 1<<10)
			it.Health = pointerTo(d, it.Health, (*listDecoder).health)
		case "NetworkSettings":
			d.once(&seen, 1<<11)
			it.NetworkSettings = pointerTo(d, it.NetworkSettings, (*listDecoder).settings)
		case "Mounts":
			d.once(&seen, 1<<12)
			it.Mounts = listOf(d, it.Mounts, (*listDecoder).mount)
		default:
			d.unknown(k, itemFields)
		}
	}
}

// listOf reads an array whose elements read reads (a null element is the
// zero one); null leaves cur, [] is an empty slice, as with encoding/json.
func listOf[T any](d *listDecoder, cur []T, read func(*listDecoder, *T)) []T {
	if d.null() {
		return cur
	}
	out := []T{}
	for more := d.elems(); more && !d.bad; more = d.next(']') {
		var v T
		if !d.null() {
			read(d, &v)
		}
		out = append(out, v)
	}
	return out
}

// pointerTo reads an object that read reads into a new T; null is nil.
func pointerTo[T any](d *listDecoder, cur *T, read func(*listDecoder, *T)) *T {
	if d.null() {
		return nil
	}
	v := new(T)
	read(d, v)
	return v
}

// only reads an object of which only member field matters, with read.
func (d *listDecoder) only(field string, read func()) {
	seen := false
	for more := d.members(); more && !d.bad; more = d.next('}') {
		if k := d.key(); string(k) == field {
			d.bad = d.bad || seen
			seen = true
			read()
		} else {
			d.unknown(k, []string{field})
		}
	}
}

// strings reads an array of strings (a null element is "").
func (d *listDecoder) strings(v *[]string) {
	*v = listOf(d, *v, func(d *listDecoder, s *string) {
		if d.peek() != '"' {
			d.fail()
			return
		}
		*s = d.text(d.strBytes())
	})
}

// labels reads an object of strings (a null value is "").
func (d *listDecoder) labels(v *map[string]string) {
	if d.null() {
		*v = nil
		return
	}
	out := map[string]string{}
	for more := d.members(); more && !d.bad; more = d.next('}') {
		k := d.text(d.key())
		var s string
		d.str(&s)
		out[k] = s
	}
	*v = out
}

func (d *listDecoder) port(p *listPort) {
	var seen uint16
	for more := d.members(); more && !d.bad; more = d.next('}') {
		switch k := d.key(); string(k) {
		case "IP":
			d.once(&seen, 1<<0)
			d.str(&p.IP)
		case "PrivatePort":
			d.once(&seen, 1<<1)
			d.int(&p.PrivatePort)
		case "PublicPort":
			d.once(&seen, 1<<2)
			d.int(&p.PublicPort)
		case "Type":
			d.once(&seen, 1<<3)
			d.str(&p.Type)
		default:
			d.unknown(k, portFields)
		}
	}
}

func (d *listDecoder) health(h *listHealth) { d.only("Status", func() { d.str(&h.Status) }) }

func (d *listDecoder) settings(h *listSettings) {
	d.only("Networks", func() { d.networks(&h.Networks) })
}

// networks reads the endpoints by network name (a null one is nil).
func (d *listDecoder) networks(v *map[string]*listEndpoint) {
	if d.null() {
		*v = nil
		return
	}
	out := map[string]*listEndpoint{}
	for more := d.members(); more && !d.bad; more = d.next('}') {
		k := d.text(d.key())
		out[k] = pointerTo(d, nil, (*listDecoder).endpoint)
	}
	*v = out
}

func (d *listDecoder) endpoint(h *listEndpoint) { d.only("IPAddress", func() { d.str(&h.IPAddress) }) }

func (d *listDecoder) mount(m *listMount) {
	var seen uint16
	for more := d.members(); more && !d.bad; more = d.next('}') {
		switch k := d.key(); string(k) {
		case "Type":
			d.once(&seen, 1<<0)
			d.str(&m.Type)
		case "Name":
			d.once(&seen, 1<<1)
			d.str(&m.Name)
		case "Source":
			d.once(&seen, 1<<2)
			d.str(&m.Source)
		case "Destination":
			d.once(&seen, 1<<3)
			d.str(&m.Destination)
		case "Mode":
			d.once(&seen, 1<<4)
			d.str(&m.Mode)
		case "RW":
			d.once(&seen, 1<<5)
			d.bool(&m.RW)
		default:
			d.unknown(k, mountFields)
		}
	}
}
