package api

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/files"
	"github.com/berth-dev/berth/shared/fault"
)

// fileHandlers serve the container file browser, shells and the container
// update endpoints (routes_files.go).
type fileHandlers struct {
	svc *files.Service
}

// pathParam is the path a file request names: the query parameter path, or
// the body's when the query has none.
func pathParam(c *gin.Context, body string) string {
	if p := c.Query("path"); p != "" {
		return p
	}
	return body
}

func (h *fileHandlers) list(c *gin.Context) error {
	l, err := h.svc.List(c.Request.Context(), envOf(c), c.Param("id"), c.Query("path"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, l)
}

func (h *fileHandlers) readContent(c *gin.Context) error {
	if c.Query("path") == "" {
		return fault.New(fault.Invalid, "Path is required")
	}
	ct, err := h.svc.ReadContent(c.Request.Context(), envOf(c), c.Param("id"), c.Query("path"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, ct)
}

// writeContentBodyLimit allows the editor's limit in JSON-escaped form.
const writeContentBodyLimit = 6*files.ContentLimit + 64<<10

func (h *fileHandlers) writeContent(c *gin.Context) error {
	var req fileWriteInput
	if err := bindLargeJSON(c, &req, writeContentBodyLimit); err != nil {
		return err
	}
	if req.Content == nil {
		return fault.New(fault.Invalid, "content is required")
	}
	p := pathParam(c, req.Path)
	if err := h.svc.WriteContent(c.Request.Context(), envOf(c), c.Param("id"), p, *req.Content); err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), p)
	return writeJSON(c, http.StatusOK, success)
}

func (h *fileHandlers) create(c *gin.Context) error {
	var req struct {
		Path        string `json:"path"`
		Type        string `json:"type"`
		IsDirectory bool   `json:"isDirectory"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	kind := req.Type
	if q := c.Query("type"); q != "" {
		kind = q
	}
	if req.IsDirectory && kind == "" {
		kind = files.KindDirectory
	}
	if kind == "dir" || kind == "folder" {
		kind = files.KindDirectory
	}
	p := pathParam(c, req.Path)
	if err := h.svc.Create(c.Request.Context(), envOf(c), c.Param("id"), p, kind); err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), p)
	return writeJSON(c, http.StatusOK, success)
}

func (h *fileHandlers) remove(c *gin.Context) error {
	p := c.Query("path")
	if p == "" {
		var req pathInput
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		p = req.Path
	}
	if err := h.svc.Delete(c.Request.Context(), envOf(c), c.Param("id"), p); err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), p)
	return writeJSON(c, http.StatusOK, success)
}

func (h *fileHandlers) rename(c *gin.Context) error {
	var req fileRenameInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	from := firstNonEmpty(c.Query("path"), req.Path, req.OldPath, req.From)
	to := firstNonEmpty(c.Query("newPath"), req.NewPath, req.To)
	if to == "" && req.NewName != "" {
		if strings.Contains(req.NewName, "/") {
			return fault.New(fault.Invalid, "newName must be a file name without '/'")
		}
		to = path.Join(path.Dir(path.Clean("/"+from)), req.NewName)
	}
	if strings.TrimSpace(from) == "" {
		return fault.New(fault.Invalid, "Path is required")
	}
	if err := h.svc.Rename(c.Request.Context(), envOf(c), c.Param("id"), from, to); err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), from+" -> "+to)
	return writeJSON(c, http.StatusOK, success)
}

// fileMode is a permission mode sent as an octal string ("0755") or as a
// number whose decimal digits are the octal ones (755).
type fileMode string

func (m *fileMode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = fileMode(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fault.Invalidf("mode must be an octal string such as \"0755\" or a number such as 755")
	}
	*m = fileMode(n.String())
	return nil
}

func (h *fileHandlers) chmod(c *gin.Context) error {
	var req fileChmodInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Mode == "" {
		return fault.New(fault.Invalid, "mode is required")
	}
	mode, err := files.ParseMode(string(req.Mode))
	if err != nil {
		return err
	}
	p := pathParam(c, req.Path)
	if err := h.svc.Chmod(c.Request.Context(), envOf(c), c.Param("id"), p, mode, req.Recursive); err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), fmt.Sprintf("%s %04o", p, mode))
	return writeJSON(c, http.StatusOK, success)
}

func (h *fileHandlers) download(c *gin.Context) error {
	if c.Query("path") == "" {
		return fault.New(fault.Invalid, "Path is required")
	}
	// format is the reference's: "tar" (the default) or "tar.gz".
	format := c.DefaultQuery("format", "tar")
	if format != "tar" && format != "tar.gz" {
		return fault.New(fault.Invalid, `format must be "tar" or "tar.gz"`)
	}
	rc, name, err := h.svc.Download(c.Request.Context(), envOf(c), c.Param("id"), c.Query("path"))
	if err != nil {
		return err
	}
	defer rc.Close()
	var w io.Writer = c.Writer
	if format == "tar.gz" {
		gz := gzip.NewWriter(c.Writer)
		defer gz.Close()
		w, name = gz, name+".gz"
		c.Header("Content-Type", "application/gzip")
	} else {
		c.Header("Content-Type", "application/x-tar")
	}
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	c.Status(http.StatusOK)
	// The status is sent: a failure from here on can only cut the stream.
	_, _ = io.Copy(w, rc)
	return nil
}

// tooLargeUpload is the answer to an upload over files.UploadLimit.
var tooLargeUpload = &files.TooLargeError{Message: fmt.Sprintf("Upload is larger than the limit of %d MiB", files.UploadLimit>>20)}

// upload serves POST …/files/upload?path=<dir>: multipart files (any field
// name). Each file is spooled to a temporary file (the tar stream into the
// engine needs its size first), so memory stays constant.
func (h *fileHandlers) upload(c *gin.Context) error {
	if c.Request.ContentLength > files.UploadLimit {
		return tooLargeUpload
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, files.UploadLimit)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return fault.Wrap(fault.Invalid, "Upload must be a multipart/form-data request", err)
	}
	dir := c.Query("path")
	var list []files.UploadFile
	defer func() {
		for _, f := range list {
			if tf, ok := f.Body.(*os.File); ok {
				_ = tf.Close()
				_ = os.Remove(tf.Name())
			}
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadError(err)
		}
		if part.FileName() == "" {
			if part.FormName() == "path" && dir == "" {
				b, err := io.ReadAll(io.LimitReader(part, 4096))
				if err != nil {
					return uploadError(err)
				}
				dir = string(b)
			}
			continue
		}
		tf, err := os.CreateTemp("", "berth-upload-")
		if err != nil {
			return err
		}
		list = append(list, files.UploadFile{Name: files.UploadName(part.FileName()), Body: tf})
		n, err := io.Copy(tf, part)
		if err != nil {
			return uploadError(err)
		}
		if _, err := tf.Seek(0, io.SeekStart); err != nil {
			return err
		}
		list[len(list)-1].Size = n
	}
	if dir == "" {
		dir = "/"
	}
	if err := h.svc.Upload(c.Request.Context(), envOf(c), c.Param("id"), dir, list); err != nil {
		return err
	}
	names := make([]string, len(list))
	for i, f := range list {
		names[i] = f.Name
	}
	noteAudit(c, c.Param("id"), path.Join("/", dir)+": "+strings.Join(names, ", "))
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "files": names})
}

// uploadError is the fault of a failed read of an upload body.
func uploadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return tooLargeUpload
	}
	return fault.Wrap(fault.Invalid, "Invalid multipart upload", err).WithDetails(err.Error())
}

func (h *fileHandlers) shells(c *gin.Context) error {
	sh, err := h.svc.Shells(c.Request.Context(), envOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, sh)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// bindLargeJSON is bindJSON with a body limit of its own (bindJSON's is
// smaller than an editor's file in JSON-escaped form).
func bindLargeJSON(c *gin.Context, v any, limit int64) error {
	body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	if err := json.NewDecoder(body).Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &files.TooLargeError{Message: fmt.Sprintf("Request body too large: the editor's limit is %d MiB", files.ContentLimit>>20)}
		}
		return fault.Wrap(fault.Invalid, "Invalid JSON body", err).WithDetails(err.Error())
	}
	return nil
}
