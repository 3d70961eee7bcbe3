package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// DiskUsage is the engine's disk use by kind (/system/df), in bytes.
type DiskUsage struct {
	Images     DiskUse `json:"images"`
	Containers DiskUse `json:"containers"`
	Volumes    DiskUse `json:"volumes"`
	BuildCache DiskUse `json:"buildCache"`
}

// DiskUse is the disk use of one kind of object.
type DiskUse struct {
	Total       int64 `json:"total"`
	Active      int64 `json:"active"`
	Size        int64 `json:"size"`
	Reclaimable int64 `json:"reclaimable"`
}

// DiskUsage returns how much disk the engine's images, containers, volumes
// and build cache take. The engine computes one at a time (before API 1.42
// a second request fails with "a disk usage operation is already running"),
// so concurrent reads of one environment share a single call, and a call
// that meets another client's computation waits for it and asks again.
func (c *Client) DiskUsage(ctx context.Context) (DiskUsage, error) {
	ch := c.conn.df.DoChan("df", func() (any, error) {
		// Not tied to the first caller's context: the others wait too.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*callTimeout)
		defer cancel()
		return c.diskUsage(ctx)
	})
	select {
	case <-ctx.Done():
		return DiskUsage{}, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return DiskUsage{}, r.Err
		}
		return r.Val.(DiskUsage), nil
	}
}

// diskBusy is the engine's answer while another disk usage computation runs.
const diskBusy = "disk usage operation is already running"

func (c *Client) diskUsage(ctx context.Context) (DiskUsage, error) {
	wait := 100 * time.Millisecond
	for {
		res, err := c.cli.DiskUsage(ctx, client.DiskUsageOptions{Containers: true, Images: true, Volumes: true, BuildCache: true})
		if err != nil && strings.Contains(err.Error(), diskBusy) {
			select {
			case <-ctx.Done():
				return DiskUsage{}, c.fail(err)
			case <-time.After(wait):
			}
			wait = min(2*wait, 2*time.Second)
			continue
		}
		if err != nil {
			return DiskUsage{}, c.fail(err)
		}
		return DiskUsage{
			Images: DiskUse{Total: res.Images.TotalCount, Active: res.Images.ActiveCount, Size: res.Images.TotalSize,
				Reclaimable: res.Images.Reclaimable},
			Containers: DiskUse{Total: res.Containers.TotalCount, Active: res.Containers.ActiveCount,
				Size: res.Containers.TotalSize, Reclaimable: res.Containers.Reclaimable},
			Volumes: DiskUse{Total: res.Volumes.TotalCount, Active: res.Volumes.ActiveCount, Size: res.Volumes.TotalSize,
				Reclaimable: res.Volumes.Reclaimable},
			BuildCache: DiskUse{Total: res.BuildCache.TotalCount, Active: res.BuildCache.ActiveCount,
				Size: res.BuildCache.TotalSize, Reclaimable: res.BuildCache.Reclaimable},
		}, nil
	}
}

// Pruned is what a prune removed: the ids or names, and the bytes freed.
type Pruned struct {
	Deleted        []string `json:"deleted"`
	SpaceReclaimed uint64   `json:"spaceReclaimed"`
}

// labelFilters turns "key" or "key=value" selectors into the engine's label
// filter; an empty list selects everything.
func labelFilters(labels []string) client.Filters {
	f := client.Filters{}
	for _, l := range labels {
		f.Add("label", l)
	}
	return f
}

// PruneContainers removes stopped containers carrying every label of labels.
func (c *Client) PruneContainers(ctx context.Context, labels []string) (Pruned, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*callTimeout)
	defer cancel()
	res, err := c.cli.ContainerPrune(ctx, client.ContainerPruneOptions{Filters: labelFilters(labels)})
	if err != nil {
		return Pruned{}, c.fail(err)
	}
	return Pruned{Deleted: nonNil(res.Report.ContainersDeleted), SpaceReclaimed: res.Report.SpaceReclaimed}, nil
}

// PruneNetworks removes networks no container uses that carry every label
// of labels.
func (c *Client) PruneNetworks(ctx context.Context, labels []string) (Pruned, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*callTimeout)
	defer cancel()
	res, err := c.cli.NetworkPrune(ctx, client.NetworkPruneOptions{Filters: labelFilters(labels)})
	if err != nil {
		return Pruned{}, c.fail(err)
	}
	return Pruned{Deleted: nonNil(res.Report.NetworksDeleted)}, nil
}

// PruneVolumes removes volumes no container uses that carry every label of
// labels, named ones included (engines before API 1.42 always prune named
// volumes; later ones need the "all" filter for them).
func (c *Client) PruneVolumes(ctx context.Context, labels []string) (Pruned, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*callTimeout)
	defer cancel()
	opts := client.VolumePruneOptions{Filters: labelFilters(labels), All: apiAtLeast(c.cli.ClientVersion(), 1, 42)}
	res, err := c.cli.VolumePrune(ctx, opts)
	if err != nil {
		return Pruned{}, c.fail(err)
	}
	return Pruned{Deleted: nonNil(res.Report.VolumesDeleted), SpaceReclaimed: res.Report.SpaceReclaimed}, nil
}

// apiAtLeast reports whether the API version v ("1.41") is major.minor or later.
func apiAtLeast(v string, major, minor int) bool {
	a, b, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ContainerSize is the disk use of one container: its writable layer
// (SizeRw) and its whole file system with the image (SizeRootFs).
type ContainerSize struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	SizeRw     int64  `json:"SizeRw"`
	SizeRootFs int64  `json:"SizeRootFs"`
}

// ContainerSizes lists every container with its sizes (the engine computes
// them on request: slower than a plain list).
func (c *Client) ContainerSizes(ctx context.Context) ([]ContainerSize, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Size: true})
	if err != nil {
		return nil, c.fail(err)
	}
	out := make([]ContainerSize, 0, len(res.Items))
	for _, s := range res.Items {
		name := ""
		if len(s.Names) > 0 {
			name = strings.TrimPrefix(s.Names[0], "/")
		}
		out = append(out, ContainerSize{ID: s.ID, Name: name, SizeRw: s.SizeRw, SizeRootFs: s.SizeRootFs})
	}
	return out, nil
}

// PruneDanglingImages removes dangling images carrying every label of
// labels.
func (c *Client) PruneDanglingImages(ctx context.Context, labels []string) (Pruned, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*callTimeout)
	defer cancel()
	f := labelFilters(labels)
	f.Add("dangling", "true")
	res, err := c.cli.ImagePrune(ctx, client.ImagePruneOptions{Filters: f})
	if err != nil {
		return Pruned{}, c.fail(err)
	}
	out := Pruned{Deleted: []string{}, SpaceReclaimed: res.Report.SpaceReclaimed}
	for _, d := range res.Report.ImagesDeleted {
		if d.Deleted != "" {
			out.Deleted = append(out.Deleted, d.Deleted)
		}
	}
	return out, nil
}

// HostInfo is what an engine tells about its host.
type HostInfo struct {
	Info
	KernelVersion string `json:"kernelVersion"`
	OSType        string `json:"osType"`
	StorageDriver string `json:"storageDriver"`
	DockerRootDir string `json:"dockerRootDir"`
	SystemTime    string `json:"systemTime"`
	LoggingDriver string `json:"loggingDriver"`
	CgroupDriver  string `json:"cgroupDriver"`
}

// HostInfo returns the engine's facts with those of its host.
func (c *Client) HostInfo(ctx context.Context) (HostInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return HostInfo{}, c.fail(err)
	}
	i := res.Info
	return HostInfo{
		Info: Info{
			ServerVersion: i.ServerVersion, APIVersion: c.cli.ClientVersion(),
			Containers: i.Containers, Running: i.ContainersRunning, Paused: i.ContainersPaused,
			Stopped: i.ContainersStopped, Images: i.Images, Name: i.Name, OS: i.OperatingSystem,
			Arch: i.Architecture, CPUs: i.NCPU, MemTotal: i.MemTotal, CgroupVersion: i.CgroupVersion,
		},
		KernelVersion: i.KernelVersion, OSType: i.OSType, StorageDriver: i.Driver, DockerRootDir: i.DockerRootDir,
		SystemTime: i.SystemTime, LoggingDriver: i.LoggingDriver, CgroupDriver: i.CgroupDriver,
	}, nil
}
