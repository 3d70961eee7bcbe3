package api

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strconv"
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

// exportVolume streams a volume's content, or a path inside it (?path=),
// as a tar, a gzipped tar (?format=tar.gz, Berth's ?compress=gzip) or, for
// ?format=raw and a file, the file's bytes alone (a directory falls back to
// a tar, as in the reference).
func (s *Server) exportVolume(c *gin.Context) error {
	format, err := volumeExportFormat(c.Query("format"), c.Query("compress"))
	if err != nil {
		return err
	}
	name := c.Param("name")
	a, err := s.volHelpers.Export(c.Request.Context(), envOf(c), name, c.Query("path"))
	if err != nil {
		return err
	}
	defer a.Close() // removes the helper, also when the client went away
	file := name
	if a.Path != "/" {
		file += "-" + strings.ReplaceAll(strings.TrimPrefix(a.Path, "/"), "/", "-")
	}
	if format == "raw" && !a.Dir {
		return writeRawFile(c, a, path.Base(a.Path))
	}
	return writeArchive(c, a, attachmentName(file, ".tar"), format == "tar.gz")
}

// volumeExportFormat is the format of a volume export, from the reference's
// format (tar, the default, tar.gz or raw) and Berth's compress (gzip or
// none); the two must agree when both are given.
func volumeExportFormat(format, compress string) (string, error) {
	switch format {
	case "", "tar", "tar.gz", "raw":
	default:
		return "", fault.Invalidf("format must be tar, tar.gz or raw")
	}
	var fromCompress string
	switch compress {
	case "":
	case "gzip":
		fromCompress = "tar.gz"
	case "none":
		fromCompress = "tar"
	default:
		return "", fault.Invalidf("compress must be gzip or none")
	}
	switch {
	case format == "" && fromCompress == "":
		return "tar", nil
	case format == "":
		return fromCompress, nil
	case fromCompress != "" && fromCompress != format:
		return "", fault.Invalidf("format and compress disagree: give one of them")
	}
	return format, nil
}

// writeRawFile answers the one file the tar stream r holds, its bytes
// alone, as the attachment file.
func writeRawFile(c *gin.Context, r io.Reader, file string) error {
	tr := tar.NewReader(r)
	hdr, err := tr.Next()
	if err != nil {
		return fmt.Errorf("volume export: %w", err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return fault.Invalidf("Path is not a regular file")
	}
	c.Header("Content-Type", "application/octet-stream")
	c.Header("Content-Disposition", `attachment; filename="`+attachmentName(file, "")+`"`)
	c.Header("Content-Length", strconv.FormatInt(hdr.Size, 10))
	c.Header("Content-Encoding", "identity")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	_, err = io.Copy(c.Writer, tr)
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
