package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/api/pkg/authconfig"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	"github.com/berth-dev/berth/shared/agentpb"
)

// Image is one entry of an image list, with the engine's own field names and
// their camelCase twins (clients decode either).
type Image struct {
	ID          string            `json:"Id"`
	RepoTags    []string          `json:"RepoTags"`
	RepoDigests []string          `json:"RepoDigests"`
	Created     int64             `json:"Created"`
	Size        int64             `json:"Size"`
	VirtualSize int64             `json:"VirtualSize"`
	SharedSize  int64             `json:"SharedSize"`
	Labels      map[string]string `json:"Labels"`
	Containers  int64             `json:"Containers"`

	IDTwin          string            `json:"id"`
	RepoTagsTwin    []string          `json:"repoTags"`
	Tags            []string          `json:"tags"`
	RepoDigestsTwin []string          `json:"repoDigests"`
	SizeTwin        int64             `json:"size"`
	VirtualSizeTwin int64             `json:"virtualSize"`
	CreatedTwin     int64             `json:"created"`
	LabelsTwin      map[string]string `json:"labels"`
	ContainersTwin  int64             `json:"containers"`
}

// ListImages lists the images, counting the containers that use each.
// Engines before API 1.42 do not count them (Containers -1): the container
// list then tells, fetched beside the image list rather than after it; once
// an engine was seen counting, its container list is not fetched.
func (c *Client) ListImages(ctx context.Context) ([]Image, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	type usesAnswer struct {
		uses map[string]int64
		err  error
	}
	var usesc chan usesAnswer
	if !c.conn.imagesCounted.Load() {
		usesc = make(chan usesAnswer, 1)
		go func() {
			uses, err := c.imageUses(ctx)
			usesc <- usesAnswer{uses, err}
		}()
	}
	res, err := c.cli.ImageList(ctx, client.ImageListOptions{})
	if err != nil {
		return nil, c.fail(err)
	}
	var uses map[string]int64
	counted := true
	for _, s := range res.Items {
		if s.Containers < 0 {
			counted = false
			break
		}
	}
	c.conn.imagesCounted.Store(counted)
	if !counted {
		if usesc == nil { // the engine counted last time
			if uses, err = c.imageUses(ctx); err != nil {
				return nil, err
			}
		} else {
			a := <-usesc
			if a.err != nil {
				return nil, a.err
			}
			uses = a.uses
		}
	}
	out := make([]Image, 0, len(res.Items))
	for _, s := range res.Items {
		if s.Containers < 0 {
			s.Containers = uses[s.ID]
		}
		tags, digests, labels := s.RepoTags, s.RepoDigests, s.Labels
		if tags == nil {
			tags = []string{}
		}
		if digests == nil {
			digests = []string{}
		}
		if labels == nil {
			labels = map[string]string{}
		}
		out = append(out, Image{ID: s.ID, RepoTags: tags, RepoDigests: digests, Created: s.Created, Size: s.Size,
			VirtualSize: s.Size, SharedSize: s.SharedSize, Labels: labels, Containers: s.Containers,
			IDTwin: s.ID, RepoTagsTwin: tags, Tags: tags, RepoDigestsTwin: digests, SizeTwin: s.Size,
			VirtualSizeTwin: s.Size, CreatedTwin: s.Created, LabelsTwin: labels, ContainersTwin: s.Containers})
	}
	return out, nil
}

// imageUses counts the containers (all states) of each image id, from the
// container list (shared with the lists asked for at the same time).
func (c *Client) imageUses(ctx context.Context) (map[string]int64, error) {
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return nil, err
	}
	uses := make(map[string]int64, len(list))
	for _, ct := range list {
		uses[ct.ImageID]++
	}
	return uses, nil
}

// ImageInfo is the part of an image inspection Berth uses.
type ImageInfo struct {
	ID          string
	RepoTags    []string
	RepoDigests []string
}

// InspectImage returns an image's id and names (id, name or digest).
func (c *Client) InspectImage(ctx context.Context, ref string) (ImageInfo, error) {
	if err := CheckImage(ref); err != nil {
		return ImageInfo{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ImageInspect(ctx, ref)
	if err != nil {
		return ImageInfo{}, c.fail(err)
	}
	return ImageInfo{ID: res.ID, RepoTags: res.RepoTags, RepoDigests: res.RepoDigests}, nil
}

// InspectImageRaw returns the engine's inspection of an image (id, name or
// digest) as the engine sent it.
func (c *Client) InspectImageRaw(ctx context.Context, ref string) (json.RawMessage, error) {
	if err := CheckImage(ref); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var raw bytes.Buffer
	if _, err := c.cli.ImageInspect(ctx, ref, client.ImageInspectWithRawResponse(&raw)); err != nil {
		return nil, c.fail(err)
	}
	return json.RawMessage(raw.Bytes()), nil
}

// Credentials authenticate at a registry.
type Credentials struct {
	Username, Password, ServerAddress string
}

func (cr *Credentials) encode() (string, error) {
	if cr == nil {
		return "", nil
	}
	return authconfig.Encode(registry.AuthConfig{Username: cr.Username, Password: cr.Password, ServerAddress: cr.ServerAddress})
}

// Progress is one line of a pull or push: a layer's status.
type Progress struct {
	ID      string
	Status  string
	Current int64
	Total   int64
}

// TransferError is a failed pull or push, as the engine reported it.
type TransferError struct {
	Message string
	Code    int
}

func (e *TransferError) Error() string { return e.Message }

// PullImage pulls ref (a normalized reference) and calls fn for every
// progress line. The context bounds the whole transfer.
func (c *Client) PullImage(ctx context.Context, ref string, creds *Credentials, fn func(Progress)) error {
	if err := CheckImageName(ref); err != nil {
		return err
	}
	defer c.m.wrote(c.envID) // a tag may have moved once the stream ended (see OnWrite)
	if c.agent != nil {
		return c.agentTransfer(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Pull{
			Pull: &agentpb.PullRequest{Reference: ref, Credentials: agentCredentials(creds)}}}, fn)
	}
	auth, err := creds.encode()
	if err != nil {
		return err
	}
	resp, err := c.cli.ImagePull(ctx, ref, client.ImagePullOptions{RegistryAuth: auth})
	if err != nil {
		return c.fail(err)
	}
	defer resp.Close()
	return relay(ctx, resp, fn)
}

// PushImage pushes ref and calls fn for every progress line.
func (c *Client) PushImage(ctx context.Context, ref string, creds *Credentials, fn func(Progress)) error {
	if err := CheckImageName(ref); err != nil {
		return err
	}
	if c.agent != nil {
		return c.agentTransfer(ctx, &agentpb.OperationInput{Input: &agentpb.OperationInput_Push{
			Push: &agentpb.PushRequest{Reference: ref, Credentials: agentCredentials(creds)}}}, fn)
	}
	auth, err := creds.encode()
	if err != nil {
		return err
	}
	if auth == "" {
		// The engine requires the header; an empty config means anonymous.
		auth, _ = authconfig.Encode(registry.AuthConfig{})
	}
	resp, err := c.cli.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: auth})
	if err != nil {
		return c.fail(err)
	}
	defer resp.Close()
	return relay(ctx, resp, fn)
}

// relay reads the engine's progress stream (one JSON object per line) and
// calls fn per line; an error line ends it with a TransferError.
func relay(ctx context.Context, r io.Reader, fn func(Progress)) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Status         string `json:"status"`
			ID             string `json:"id"`
			ProgressDetail struct {
				Current int64 `json:"current"`
				Total   int64 `json:"total"`
			} `json:"progressDetail"`
			ErrorDetail *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"errorDetail"`
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("engine: read progress: %w", err)
		}
		if m.ErrorDetail != nil || m.Error != "" {
			te := &TransferError{Message: m.Error}
			if m.ErrorDetail != nil {
				te.Code = m.ErrorDetail.Code
				if te.Message == "" {
					te.Message = m.ErrorDetail.Message
				}
			}
			return te
		}
		fn(Progress{ID: m.ID, Status: m.Status, Current: m.ProgressDetail.Current, Total: m.ProgressDetail.Total})
	}
}

// TagImage gives source the name target.
func (c *Client) TagImage(ctx context.Context, source, target string) error {
	if err := CheckImage(source); err != nil {
		return err
	}
	if err := CheckImageName(target); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.cli.ImageTag(ctx, client.ImageTagOptions{Source: source, Target: target})
	return c.fail(err)
}

// RemovedImage is one line of an image removal.
type RemovedImage struct {
	Untagged string `json:"untagged,omitempty"`
	Deleted  string `json:"deleted,omitempty"`
}

// RemoveImage removes an image (force: even when tagged in several
// repositories or used by a stopped container).
func (c *Client) RemoveImage(ctx context.Context, ref string, force bool) ([]RemovedImage, error) {
	if err := CheckImage(ref); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: force, PruneChildren: true})
	if err != nil {
		return nil, c.fail(err)
	}
	out := make([]RemovedImage, 0, len(res.Items))
	for _, d := range res.Items {
		out = append(out, RemovedImage{Untagged: d.Untagged, Deleted: d.Deleted})
	}
	return out, nil
}

// HistoryItem is one layer of an image's history.
type HistoryItem struct {
	ID        string   `json:"Id"`
	Created   int64    `json:"Created"`
	CreatedBy string   `json:"CreatedBy"`
	Tags      []string `json:"Tags"`
	Size      int64    `json:"Size"`
	Comment   string   `json:"Comment"`
}

// ImageHistory returns the layers of an image, newest first.
func (c *Client) ImageHistory(ctx context.Context, ref string) ([]HistoryItem, error) {
	if err := CheckImage(ref); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ImageHistory(ctx, ref)
	if err != nil {
		return nil, c.fail(err)
	}
	out := make([]HistoryItem, 0, len(res.Items))
	for _, h := range res.Items {
		tags := h.Tags
		if tags == nil {
			tags = []string{}
		}
		out = append(out, HistoryItem{ID: h.ID, Created: h.Created, CreatedBy: h.CreatedBy, Tags: tags, Size: h.Size, Comment: h.Comment})
	}
	return out, nil
}

// PruneReport is what a prune removed.
type PruneReport struct {
	Deleted        []RemovedImage `json:"deleted"`
	SpaceReclaimed uint64         `json:"spaceReclaimed"`
}

// PruneImages removes unused images: dangling ones only, or every image no
// container uses when all is true.
func (c *Client) PruneImages(ctx context.Context, all bool) (PruneReport, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*callTimeout)
	defer cancel()
	f := client.Filters{}
	f.Add("dangling", fmt.Sprint(!all))
	res, err := c.cli.ImagePrune(ctx, client.ImagePruneOptions{Filters: f})
	if err != nil {
		return PruneReport{}, c.fail(err)
	}
	rep := PruneReport{Deleted: []RemovedImage{}, SpaceReclaimed: res.Report.SpaceReclaimed}
	for _, d := range res.Report.ImagesDeleted {
		rep.Deleted = append(rep.Deleted, RemovedImage{Untagged: d.Untagged, Deleted: d.Deleted})
	}
	return rep, nil
}

// Login checks credentials at a registry from the engine's side.
func (c *Client) Login(ctx context.Context, creds Credentials) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.cli.RegistryLogin(ctx, client.RegistryLoginOptions{Username: creds.Username, Password: creds.Password,
		ServerAddress: creds.ServerAddress})
	return c.fail(err)
}
