package api

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

func (s *Server) browseVolume(c *gin.Context) error {
	l, err := s.volHelpers.List(c.Request.Context(), envOf(c), c.Param("name"), c.Query("path"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, l)
}

func (s *Server) volumeFileContent(c *gin.Context) error {
	f, err := s.volHelpers.Read(c.Request.Context(), envOf(c), c.Param("name"), c.Query("path"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, f)
}

func (s *Server) releaseVolumeBrowse(c *gin.Context) error {
	released, err := s.volHelpers.Release(c.Request.Context(), envOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "released": released})
}

func (s *Server) cloneVolume(c *gin.Context) error {
	var req nameInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	source := c.Param("name")
	v, err := s.volHelpers.Clone(c.Request.Context(), envOf(c), source, req.Name)
	if err != nil {
		return err
	}
	noteAudit(c, v.Name, v.Name)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "name": v.Name, "source": source})
}

// unsafeFileChars are the characters kept out of a download's file name.
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// attachmentName makes a file name of s and ext.
func attachmentName(s, ext string) string {
	n := strings.Trim(unsafeFileChars.ReplaceAllString(s, "_"), "_.")
	if n == "" {
		n = "export"
	}
	return n + ext
}

func (s *Server) exportVolume(c *gin.Context) error {
	compress := c.Query("compress")
	if compress != "" && compress != "gzip" && compress != "none" {
		return fault.Invalidf("compress must be gzip or none")
	}
	name := c.Param("name")
	rc, err := s.volHelpers.Export(c.Request.Context(), envOf(c), name)
	if err != nil {
		return err
	}
	defer rc.Close() // removes the helper, also when the client went away
	file := attachmentName(name, ".tar")
	if compress == "gzip" {
		file += ".gz"
		c.Header("Content-Type", "application/gzip")
	} else {
		c.Header("Content-Type", "application/x-tar")
	}
	c.Header("Content-Disposition", `attachment; filename="`+file+`"`)
	c.Header("Content-Encoding", "identity") // a download as it is: never recompressed on the way
	c.Header("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	if compress == "gzip" {
		zw := gzip.NewWriter(c.Writer)
		if _, err := io.Copy(zw, rc); err != nil {
			return err
		}
		return zw.Close()
	}
	_, err = io.Copy(c.Writer, rc)
	return err
}

// exportImage streams docker save of the image: a tar, or with
// ?compress=true (the reference's) a gzipped one.
func (s *Server) exportImage(c *gin.Context) error {
	id := c.Param("id")
	compress, err := queryBool(c, "compress", false)
	if err != nil {
		return err
	}
	cl, err := s.engines.Client(c.Request.Context(), envOf(c).Endpoint())
	if err != nil {
		return imageExportFault(err)
	}
	info, err := cl.InspectImage(c.Request.Context(), id)
	if err != nil {
		return imageExportFault(err)
	}
	rc, err := cl.ImageSaveStream(c.Request.Context(), id)
	if err != nil {
		return imageExportFault(err)
	}
	defer rc.Close()
	// The file is named after the tag asked for, else the image's first tag.
	name := strings.TrimPrefix(id, "sha256:")
	if len(info.RepoTags) > 0 {
		name = info.RepoTags[0]
	}
	for _, t := range info.RepoTags {
		if t == id || t == id+":latest" {
			name = t
		}
	}
	return writeArchive(c, rc, attachmentName(name, ".tar"), compress)
}

// writeArchive answers the tar stream rc as the attachment file (a .tar
// name), gzipped (and named .tar.gz) when compress is true.
func writeArchive(c *gin.Context, rc io.Reader, file string, compress bool) error {
	if compress {
		file += ".gz"
		c.Header("Content-Type", "application/gzip")
	} else {
		c.Header("Content-Type", "application/x-tar")
	}
	c.Header("Content-Disposition", `attachment; filename="`+file+`"`)
	c.Header("Content-Encoding", "identity") // a download as it is: never recompressed on the way
	c.Header("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	if !compress {
		_, err := io.Copy(c.Writer, rc)
		return err
	}
	zw := gzip.NewWriter(c.Writer)
	if _, err := io.Copy(zw, rc); err != nil {
		return err
	}
	return zw.Close()
}

// imageExportFault is the fault of a failed image export.
func imageExportFault(err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return fault.Wrap(fault.NotFound, "Image not found", err)
	}
	return fault.Wrap(fault.Internal, "Failed to export image", err).WithDetails(engine.Details(err))
}

// CloseVolumeHelpers removes the volume browse helpers kept (when Berth
// stops); leftovers of a crash are removed on the next start.
func (s *Server) CloseVolumeHelpers() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.volHelpers.Close(ctx)
}
