package engine

import (
	"context"
	"net/netip"

	"github.com/moby/moby/client"
)

// Client is the engine of one environment. Its methods carry deadlines and
// return errors translated to this package's kinds; a failure to reach the
// engine opens the environment's breaker.
type Client struct {
	cli    *client.Client
	conn   *conn
	m      *Manager
	envID  int64
	agent  *agentLink  // set for agent environments: typed operations go to the agent
	hawser *hawserLink // set for Hawser environments: compose (and edge terminals) go to the agent
}

// fail translates err and feeds the breaker.
func (c *Client) fail(err error) error {
	if err == nil {
		return nil
	}
	c.m.observe(c.conn, c.envID, err)
	return translate(err)
}

// Info is what an engine tells about itself.
type Info struct {
	ServerVersion string `json:"serverVersion"`
	APIVersion    string `json:"apiVersion"`
	Containers    int    `json:"containers"`
	Running       int    `json:"containersRunning"`
	Paused        int    `json:"containersPaused"`
	Stopped       int    `json:"containersStopped"`
	Images        int    `json:"images"`
	Name          string `json:"name"`
	OS            string `json:"os"`
	Arch          string `json:"architecture"`
	CPUs          int    `json:"cpus"`
	MemTotal      int64  `json:"memTotal"`
	CgroupVersion string `json:"cgroupVersion"`
}

// Info returns the engine's facts.
func (c *Client) Info(ctx context.Context) (Info, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return Info{}, c.fail(err)
	}
	i := res.Info
	return Info{
		ServerVersion: i.ServerVersion, APIVersion: c.cli.ClientVersion(),
		Containers: i.Containers, Running: i.ContainersRunning, Paused: i.ContainersPaused,
		Stopped: i.ContainersStopped, Images: i.Images, Name: i.Name, OS: i.OperatingSystem,
		Arch: i.Architecture, CPUs: i.NCPU, MemTotal: i.MemTotal, CgroupVersion: i.CgroupVersion,
	}, nil
}

// APIVersion returns the negotiated API version.
func (c *Client) APIVersion() string { return c.cli.ClientVersion() }

func parseAddr(s string) (netip.Addr, error) { return netip.ParseAddr(s) }

// Ping asks the engine whether it is there: the cheapest call it answers.
// The caller's deadline bounds it (a busy engine is told from a dead one by
// the deadline passing rather than the connection failing).
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.cli.Ping(ctx, client.PingOptions{}); err != nil {
		return c.fail(err)
	}
	c.conn.lastOK.Store(c.m.now().UnixNano())
	return nil
}
