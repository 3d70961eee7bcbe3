// Package picture provides the checks of uploaded pictures (environment
// icons, user avatars): small PNG, JPEG, SVG or WebP images, their type told
// by their content, never by what the client claims.
package picture

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	_ "image/jpeg" // registers the JPEG decoder for DecodeConfig
	_ "image/png"  // registers the PNG decoder for DecodeConfig
	"io"
	"net/http"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// MaxSize bounds a picture (512 KiB).
const MaxSize = 512 << 10

// MaxDimension bounds a raster picture's width and height.
const MaxDimension = 4096

// Content types of the accepted pictures.
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	SVG  = "image/svg+xml"
	WebP = "image/webp"
)

var (
	errEmpty    = fault.New(fault.Invalid, "The image is empty")
	errTooLarge = fault.New(fault.Invalid, "The image is larger than 512 KB")
	errType     = fault.New(fault.Invalid, "The image must be a PNG, JPEG, SVG or WebP file")
	errBroken   = fault.New(fault.Invalid, "The image cannot be read")
	errHuge     = fault.New(fault.Invalid, "The image is larger than 4096×4096 pixels")
	errScript   = fault.New(fault.Invalid, "SVG images with scripts, event handlers or embedded content are not accepted")
)

// Check returns the content type of data, a picture as uploaded, or why it
// is refused (a fault.Invalid): empty, over MaxSize, not one of the accepted
// types, a raster image that does not decode or is over MaxDimension, or an
// SVG that carries scripts.
func Check(data []byte) (string, error) {
	switch {
	case len(data) == 0:
		return "", errEmpty
	case len(data) > MaxSize:
		return "", errTooLarge
	}
	switch sniffed := http.DetectContentType(data); sniffed {
	case PNG, JPEG:
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || "image/"+format != sniffed {
			return "", errBroken
		}
		if cfg.Width > MaxDimension || cfg.Height > MaxDimension {
			return "", errHuge
		}
		return sniffed, nil
	case WebP:
		return WebP, nil
	}
	if err := checkSVG(data); err != nil {
		return "", err
	}
	return SVG, nil
}

// checkSVG accepts an XML document whose root is an svg element and which
// has no script or foreignObject element, no event handler attribute and no
// javascript: link.
func checkSVG(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	root := true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if root {
				return errType
			}
			return nil
		}
		if err != nil {
			if root {
				return errType
			}
			return errBroken
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if el.Name.Local != "svg" {
				return errType
			}
			root = false
		}
		switch strings.ToLower(el.Name.Local) {
		case "script", "foreignobject", "iframe", "embed", "object":
			return errScript
		}
		for _, a := range el.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Value))
			if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") || strings.HasPrefix(v, "javascript:") {
				return errScript
			}
		}
	}
}
