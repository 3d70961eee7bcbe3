package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/moby/moby/client"
)

// LoadImage loads the images of tarball (a "docker save" or OCI layout
// tarball) into the engine. Through an agent the tarball goes over the raw
// Engine pipe.
func (c *Client) LoadImage(ctx context.Context, tarball io.Reader) error {
	_, err := c.LoadImageReport(ctx, tarball)
	return err
}

// LoadImageReport is LoadImage answering the engine's last report line
// ("Loaded image: alpine:3.20").
func (c *Client) LoadImageReport(ctx context.Context, tarball io.Reader) (string, error) {
	defer c.m.wrote(c.envID) // a tag may have moved once the stream ended (see OnWrite)
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	res, err := c.cli.ImageLoad(ctx, tarball, client.ImageLoadWithQuiet(true))
	if err != nil {
		return "", c.fail(err)
	}
	defer res.Close()
	// The answer is a stream of JSON messages; a failure is one of them.
	dec := json.NewDecoder(res)
	last := ""
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return last, nil
		}
		if err != nil {
			return "", fmt.Errorf("engine: load image: %w", err)
		}
		if msg := m.ErrorDetail.Message; msg != "" || m.Error != "" {
			if msg == "" {
				msg = m.Error
			}
			return "", fmt.Errorf("%w: load image: %s", ErrInvalid, msg)
		}
		if line := strings.TrimSpace(m.Stream); line != "" {
			last = line
		}
	}
}
