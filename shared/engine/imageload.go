package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/client"
)

// LoadImage loads the images of tarball (a "docker save" or OCI layout
// tarball) into the engine. Through an agent the tarball goes over the raw
// Engine pipe.
func (c *Client) LoadImage(ctx context.Context, tarball io.Reader) error {
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	res, err := c.cli.ImageLoad(ctx, tarball, client.ImageLoadWithQuiet(true))
	if err != nil {
		return c.fail(err)
	}
	defer res.Close()
	// The answer is a stream of JSON messages; a failure is one of them.
	dec := json.NewDecoder(res)
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("engine: load image: %w", err)
		}
		if msg := m.ErrorDetail.Message; msg != "" || m.Error != "" {
			if msg == "" {
				msg = m.Error
			}
			return fmt.Errorf("engine: load image: %s", msg)
		}
	}
}
