package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/picture"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

var (
	errNoIcon        = fault.New(fault.NotFound, "Icon not found")
	errNoAvatar      = fault.New(fault.NotFound, "Avatar not found")
	errNoPicture     = fault.New(fault.Invalid, "An image file is required")
	errPictureTooBig = fault.New(fault.Invalid, "The image is larger than 512 KB")
)

// pictureFields are the JSON fields a client may send a picture in, as a
// data URL ("data:image/png;base64,…") or bare base64.
var pictureFields = []string{"icon", "avatar", "image", "data", "dataUrl", "file"}

// readPicture reads an uploaded picture in any of the forms clients send:
// a multipart form (its first file), a JSON object with a data URL, or the
// image itself as the body. Its type is then told by its content
// (picture.Check), never by the declared one.
func readPicture(c *gin.Context) (store.Picture, error) {
	// Base64 and multipart framing make the body larger than the image.
	body := http.MaxBytesReader(c.Writer, c.Request.Body, picture.MaxSize*2+64<<10)
	var data []byte
	mediaType, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	var err error
	switch {
	case mediaType == "multipart/form-data":
		data, err = firstFile(multipart.NewReader(body, params["boundary"]))
	case mediaType == "application/json":
		data, err = jsonPicture(body)
	default:
		data, err = readLimited(body)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return store.Picture{}, errPictureTooBig
		}
		return store.Picture{}, err
	}
	ct, err := picture.Check(data)
	if err != nil {
		return store.Picture{}, err
	}
	return store.Picture{ContentType: ct, Data: data}, nil
}

// readLimited reads r up to one byte over picture.MaxSize.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, picture.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > picture.MaxSize {
		return nil, errPictureTooBig
	}
	return data, nil
}

// firstFile reads the first file part of a multipart form.
func firstFile(mr *multipart.Reader) ([]byte, error) {
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errNoPicture
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, err
			}
			return nil, fault.New(fault.Invalid, "Malformed multipart form")
		}
		if part.FileName() == "" {
			_ = part.Close()
			continue
		}
		defer part.Close()
		return readLimited(part)
	}
}

// jsonPicture reads a JSON object carrying a picture in one of
// pictureFields.
func jsonPicture(r io.Reader) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&obj); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, fault.New(fault.Invalid, "Invalid JSON body")
	}
	for _, f := range pictureFields {
		raw, ok := obj[f]
		if !ok {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fault.Invalidf("%s must be a data URL", f)
		}
		if i := strings.Index(s, ","); strings.HasPrefix(s, "data:") && i > 0 {
			if !strings.HasSuffix(s[:i], ";base64") {
				return nil, fault.Invalidf("%s must be a base64 data URL", f)
			}
			s = s[i+1:]
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			return nil, fault.Invalidf("%s is not valid base64", f)
		}
		if len(data) > picture.MaxSize {
			return nil, errPictureTooBig
		}
		return data, nil
	}
	return nil, errNoPicture
}

// writePicture answers a stored picture with its content type. SVG cannot
// run anything when opened directly: the response is sandboxed.
func writePicture(c *gin.Context, p store.Picture) error {
	c.Header("Content-Type", p.ContentType)
	c.Header("Content-Length", strconv.Itoa(len(p.Data)))
	c.Header("Cache-Control", "private, no-cache")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if !p.UpdatedAt.IsZero() {
		c.Header("Last-Modified", p.UpdatedAt.UTC().Format(http.TimeFormat))
	}
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return nil
	}
	_, err := c.Writer.Write(p.Data)
	return err
}

// pictureSaved is the answer of an upload.
func pictureSaved(c *gin.Context, p store.Picture, url string) error {
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "contentType": p.ContentType, "size": len(p.Data), "url": url})
}

// getEnvironmentIcon answers the environment's icon, or 404.
func (s *Server) getEnvironmentIcon(c *gin.Context) error {
	p, err := s.store.GetEnvironmentIcon(c.Request.Context(), envOf(c).ID)
	if errors.Is(err, store.ErrNotFound) {
		return errNoIcon
	}
	if err != nil {
		return err
	}
	return writePicture(c, p)
}

// setEnvironmentIcon stores an uploaded icon for the environment.
func (s *Server) setEnvironmentIcon(c *gin.Context) error {
	env := envOf(c)
	p, err := readPicture(c)
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(env.ID, 10), env.Name)
	if err := s.store.SetEnvironmentIcon(c.Request.Context(), env.ID, p); err != nil {
		return err
	}
	return pictureSaved(c, p, "/api/environments/"+strconv.FormatInt(env.ID, 10)+"/icon")
}

// deleteEnvironmentIcon removes the environment's icon (404 when none).
func (s *Server) deleteEnvironmentIcon(c *gin.Context) error {
	env := envOf(c)
	noteAudit(c, strconv.FormatInt(env.ID, 10), env.Name)
	deleted, err := s.store.DeleteEnvironmentIcon(c.Request.Context(), env.ID)
	if err != nil {
		return err
	}
	if !deleted {
		return errNoIcon
	}
	return writeJSON(c, http.StatusOK, success)
}

// getAvatar answers the signed-in user's avatar, or 404.
func (s *Server) getAvatar(c *gin.Context) error {
	ident := identityOf(c)
	if ident == nil {
		return errNoProfile
	}
	p, err := s.store.GetUserAvatar(c.Request.Context(), ident.User.ID)
	if errors.Is(err, store.ErrNotFound) {
		return errNoAvatar
	}
	if err != nil {
		return err
	}
	return writePicture(c, p)
}

// setAvatar stores an uploaded avatar for the signed-in user.
func (s *Server) setAvatar(c *gin.Context) error {
	ident := identityOf(c)
	if ident == nil {
		return errNoProfile
	}
	p, err := readPicture(c)
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(ident.User.ID, 10), ident.User.Username)
	if err := s.store.SetUserAvatar(c.Request.Context(), ident.User.ID, p); err != nil {
		return err
	}
	return pictureSaved(c, p, "/api/profile/avatar")
}

// deleteAvatar removes the signed-in user's avatar (404 when none).
func (s *Server) deleteAvatar(c *gin.Context) error {
	ident := identityOf(c)
	if ident == nil {
		return errNoProfile
	}
	noteAudit(c, strconv.FormatInt(ident.User.ID, 10), ident.User.Username)
	deleted, err := s.store.DeleteUserAvatar(c.Request.Context(), ident.User.ID)
	if err != nil {
		return err
	}
	if !deleted {
		return errNoAvatar
	}
	return writeJSON(c, http.StatusOK, success)
}
