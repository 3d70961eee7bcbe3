package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// registryTag is a tag as GET /api/registry/tags answers it.
type registryTag struct {
	Name      string     `json:"name"`
	Digest    string     `json:"digest"`
	MediaType string     `json:"mediaType"`
	Size      int64      `json:"size"`
	Created   *time.Time `json:"created"`
}

// registryTagPage is a page of tags as GET /api/registry/tags answers it.
type registryTagPage struct {
	Repository       string
	Tags             []registryTag
	Total, Page      int
	PageSize         int
	HasNext, HasPrev bool
}

// searchResult is an entry of GET /api/registry/search.
type searchResult struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	StarCount   int    `json:"star_count"`
	IsOfficial  bool   `json:"is_official"`
	IsAutomated bool   `json:"is_automated"`
}

// addRegistry configures a registry and returns its id.
func (h *harness) addRegistry(name, u, user, password string) int64 {
	h.t.Helper()
	var created struct{ ID int64 }
	h.must(201, "POST", "/api/registries", map[string]any{"name": name + "-" + h.label, "url": u,
		"username": user, "password": password}, &created)
	return created.ID
}

// registryTags lists the tags of repo in registry id.
func (h *harness) registryTags(id int64, repo string) map[string]registryTag {
	h.t.Helper()
	var out registryTagPage
	h.must(200, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&image=%s", id, url.QueryEscape(repo)), nil, &out)
	if out.Repository != repo || out.Total != len(out.Tags) || out.Page != 1 || out.PageSize != len(out.Tags) || out.HasNext || out.HasPrev {
		h.t.Errorf("tags of %s = %+v, want every tag in one page", repo, out)
	}
	tags := map[string]registryTag{}
	for _, t := range out.Tags {
		tags[t.Name] = t
	}
	return tags
}

// wantError checks an error answer's status and message.
func (h *harness) wantError(status int, method, path, msg string) {
	h.t.Helper()
	got, body := h.do(method, path, nil)
	var e struct{ Error string }
	_ = json.Unmarshal(body, &e)
	if got != status || e.Error != msg {
		h.t.Errorf("%s %s = %d %s, want %d %q", method, path, got, body, status, msg)
	}
}

// The browser against the real local registry: two tags of a fresh
// repository pushed through the engine are found by catalog paging and
// search, listed with their digests, and one is deleted by digest.
func TestRegistryBrowserAgainstARealRegistry(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	repo := "berth-test/browse-" + h.label
	var id1, id2 string
	enginetest.RemoveImages(t, h.label, &id1, &id2)
	id1 = enginetest.BuildImage(t, enginetest.Image(), reg.host+"/"+repo+":v1", h.label, "LABEL berth.browse=v1")
	id2 = enginetest.BuildImage(t, enginetest.Image(), reg.host+"/"+repo+":v2", h.label, "LABEL berth.browse=v2")
	d1 := enginetest.Push(t, reg.host+"/"+repo+":v1", reg.user, reg.password)
	d2 := enginetest.Push(t, reg.host+"/"+repo+":v2", reg.user, reg.password)
	regID := h.addRegistry("local", reg.host, reg.user, reg.password)

	// The catalog, page by page (n and last passed through, Link followed).
	found, pages := false, 0
	next := fmt.Sprintf("/api/registry/catalog?registry=%d&n=2", regID)
	for next != "" && !found {
		pages++
		resp, err := h.http.Get(h.url + next)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Repositories []struct{ Name string }
			Pagination   struct {
				PageSize int
				HasMore  bool
				NextLast *string
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d %v", next, resp.StatusCode, err)
		}
		if page.Pagination.PageSize != 2 || len(page.Repositories) > 2 {
			t.Fatalf("page %d: pageSize %d with %d repositories", pages, page.Pagination.PageSize, len(page.Repositories))
		}
		for _, r := range page.Repositories {
			found = found || r.Name == repo
		}
		next = ""
		if link := resp.Header.Get("Link"); link != "" {
			if !page.Pagination.HasMore || page.Pagination.NextLast == nil {
				t.Fatalf("Link %q without pagination.nextLast: %+v", link, page.Pagination)
			}
			target, _, _ := strings.Cut(strings.TrimPrefix(link, "<"), ">")
			u, err := url.Parse(target)
			if err != nil || u.Query().Get("last") != *page.Pagination.NextLast {
				t.Fatalf("Link %q does not carry last=%q", link, *page.Pagination.NextLast)
			}
			next = target
		} else if page.Pagination.HasMore {
			t.Fatalf("hasMore without a Link header: %+v", page.Pagination)
		}
	}
	if !found {
		t.Fatalf("repository %s not in the catalog after %d pages", repo, pages)
	}
	if pages < 2 {
		t.Errorf("the catalog came in %d page of 2; the registry holds at least the benchmark image and ours", pages)
	}

	// Search: a substring of the name, case-insensitive.
	var search []searchResult
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&term=%s", regID, strings.ToUpper("browse-"+h.label)), nil, &search)
	if len(search) != 1 || search[0] != (searchResult{Name: repo}) {
		t.Errorf("search = %+v, want only %s", search, repo)
	}
	// q, Berth's older name of term, still works.
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&q=%s", regID, "browse-"+h.label), nil, &search)
	if len(search) != 1 || search[0].Name != repo {
		t.Errorf("search with q = %+v, want only %s", search, repo)
	}

	// Tags, with the digests the pushes produced.
	tags := h.registryTags(regID, repo)
	for name, digest := range map[string]string{"v1": d1, "v2": d2} {
		tag := tags[name]
		if tag.Digest != digest || tag.Size <= 0 || tag.Created == nil || tag.MediaType == "" {
			t.Errorf("tag %s = %+v, want digest %s, a size, a creation time and a media type", name, tag, digest)
		}
	}
	if len(tags) != 2 {
		t.Errorf("tags = %v, want v1 and v2", tags)
	}

	// Delete v1 (by its digest); v2 stays.
	var deleted struct {
		Success bool
		Digest  string
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=%s&tag=v1", regID, url.QueryEscape(repo)), nil, &deleted)
	if !deleted.Success || deleted.Digest != d1 {
		t.Errorf("delete = %+v, want digest %s", deleted, d1)
	}
	tags = h.registryTags(regID, repo)
	if _, ok := tags["v1"]; ok || tags["v2"].Digest != d2 || len(tags) != 1 {
		t.Errorf("tags after deleting v1 = %v, want v2 only", tags)
	}
	h.wantError(404, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=%s&tag=v1", regID, url.QueryEscape(repo)),
		"Repository or tag not found")
	h.wantError(404, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&image=%s", regID, url.QueryEscape(repo+"-none")),
		"Repository or tag not found")

	// Bad input: nothing asked of the registry.
	h.wantError(400, "GET", "/api/registry/catalog", "Registry ID is required")
	h.wantError(404, "GET", "/api/registry/catalog?registry=999999", "Registry not found")
	h.wantError(404, "GET", "/api/registry/tags?registry=999999&repository=x", "Registry not found")
	h.wantError(404, "DELETE", "/api/registry/image?registry=999999&repository=x&tag=y", "Registry not found")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/tags?registry=%d", regID), "Repository is required")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/search?registry=%d", regID), "Search term is required")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&image=a&repository=b", regID),
		"image and repository name different repositories; send one of them")
	h.wantError(400, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=%s", regID, url.QueryEscape(repo)), "Tag is required")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&repository=Bad%%20Name", regID), "Invalid repository name")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/catalog?registry=%d&n=5000", regID), "Page size must be at most 1000")
	if tags = h.registryTags(regID, repo); tags["v2"].Digest != d2 {
		t.Errorf("v2 after the refused requests = %+v", tags["v2"])
	}

	// The audit log names the deleted image and its digest.
	audit, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "registry.image.delete"})
	if err != nil || len(audit) != 1 || audit[0].EntityName != repo+":v1" || audit[0].EntityID != d1 {
		t.Errorf("audit of the delete = %+v, %v", audit, err)
	}

	if strings.Contains(h.logs.String(), reg.password) {
		t.Error("the registry password appears in the server's log")
	}
}

// Refused credentials are a clear 4xx; a registry that cannot be reached
// is a 503; neither leaks the password.
func TestRegistryBrowserCredentialAndConnectionFailures(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	wrong := h.addRegistry("wrong", reg.host, reg.user, "not-the-password-"+h.label)
	anonymous := h.addRegistry("anonymous", "http://"+reg.host, "", "")
	for _, id := range []int64{wrong, anonymous} {
		for _, path := range []string{"catalog?", "search?q=x&", "tags?repository=berth-test/bench-50mb&"} {
			h.wantError(400, "GET", fmt.Sprintf("/api/registry/%sregistry=%d", path, id),
				"Authentication failed. Check registry credentials.")
		}
		h.wantError(400, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=berth-test/bench-50mb&tag=1", id),
			"Authentication failed. Check registry credentials.")
	}
	closed := h.addRegistry("closed", fmt.Sprintf("http://127.0.0.1:%d", closedPort(t)), reg.user, reg.password)
	h.wantError(503, "GET", fmt.Sprintf("/api/registry/catalog?registry=%d", closed), "Could not connect to the registry")
	h.wantError(503, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&repository=a/b", closed), "Could not connect to the registry")

	hub := h.addRegistry("hub", "docker.io", "", "")
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/catalog?registry=%d", hub), "Docker Hub does not support catalog listing")

	// The benchmark image is still there for the right credentials.
	right := h.addRegistry("right", reg.host, reg.user, reg.password)
	if tags := h.registryTags(right, "berth-test/bench-50mb"); tags["1"].Digest == "" {
		t.Errorf("bench image tags = %v", tags)
	}
	if strings.Contains(h.logs.String(), "not-the-password-"+h.label) {
		t.Error("a registry password appears in the server's log")
	}
}

// A registry that does not allow deletions (405 UNSUPPORTED, as the
// distribution registry answers without storage.delete.enabled) gives a
// clear 400. The local test registry allows deletions, so this one is a fake.
func TestRegistryBrowserDeletionDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const digest = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	deletes := 0
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/":
			w.WriteHeader(200)
		case r.Method == http.MethodHead && r.URL.Path == "/v2/app/manifests/1":
			w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
			w.Header().Set("Docker-Content-Digest", digest)
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
		case r.Method == http.MethodDelete && r.URL.Path == "/v2/app/manifests/"+digest:
			deletes++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprint(w, `{"errors":[{"code":"UNSUPPORTED","message":"The operation is unsupported."}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(fake.Close)
	id := h.addRegistry("nodelete", fake.URL, "", "")
	h.wantError(400, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=app&tag=1", id),
		"This registry does not allow deleting images (deletion is disabled in its configuration)")
	if deletes != 1 {
		t.Errorf("the registry saw %d deletes by digest, want 1", deletes)
	}
}

// POST /api/registries/{id}/default moves the default mark: exactly one
// registry holds it.
func TestRegistryDefaultToggling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.addRegistry("a", "a.example", "u", "secret-a")
	b := h.addRegistry("b", "b.example", "", "")
	defaults := func() map[int64]bool {
		var list []struct {
			ID        int64
			IsDefault bool
		}
		h.must(200, "GET", "/api/registries", nil, &list)
		out := map[int64]bool{}
		for _, r := range list {
			out[r.ID] = r.IsDefault
		}
		return out
	}
	for _, id := range []int64{a, b, b, a} {
		var got map[string]any
		h.must(200, "POST", fmt.Sprintf("/api/registries/%d/default", id), nil, &got)
		if got["isDefault"] != true || int64(got["id"].(float64)) != id || got["password"] != nil {
			t.Fatalf("default %d = %v", id, got)
		}
		if id == a && got["hasCredentials"] != true {
			t.Errorf("registry a lost its credentials: %v", got)
		}
		d := defaults()
		if !d[id] || d[a] == d[b] {
			t.Fatalf("after making %d the default: %v", id, d)
		}
	}
	h.wantError(404, "POST", "/api/registries/999999/default", "Registry not found")
	if d := defaults(); !d[a] || d[b] {
		t.Errorf("after the refused request: %v", d)
	}
}

// catalogPages reads every page of registry id's catalog, n at a time,
// following the pagination, and returns the names in order.
func (h *harness) catalogPages(id int64, n int) []string {
	h.t.Helper()
	var names []string
	last := ""
	for range 50 {
		var page struct {
			Repositories []struct{ Name string }
			Pagination   struct {
				HasMore  bool
				NextLast *string
			}
		}
		h.must(200, "GET", fmt.Sprintf("/api/registry/catalog?registry=%d&n=%d&last=%s", id, n, url.QueryEscape(last)), nil, &page)
		if len(page.Repositories) > n {
			h.t.Fatalf("a page of %d holds %d repositories", n, len(page.Repositories))
		}
		for _, r := range page.Repositories {
			names = append(names, r.Name)
		}
		if !page.Pagination.HasMore {
			return names
		}
		last = *page.Pagination.NextLast
	}
	h.t.Fatalf("catalog of registry %d: more than 50 pages", id)
	return nil
}

// A registry URL with a path (host:5000/team) browses the repositories
// under that namespace, named relative to it: the catalog, paged, and a
// search list those under team/ only; tags and deletions of "app" are
// those of team/app. The same registry without the path still sees the
// full names. A path that cannot be a namespace is a clear 400.
func TestRegistryBrowserURLPathIsANamespace(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	ns := "berth-test/ns-" + h.label
	refs := map[string]string{ // repository → reference pushed
		"a":     reg.host + "/" + ns + "/a:v1",
		"b/c":   reg.host + "/" + ns + "/b/c:v1",
		"outer": reg.host + "/" + ns + "x/outer:v1", // a neighbour outside the namespace, sorted after it
	}
	var ids [3]string
	enginetest.RemoveImages(t, h.label, &ids[0], &ids[1], &ids[2])
	digests := map[string]string{}
	i := 0
	for repo, ref := range refs {
		ids[i] = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL berth.ns="+repo)
		digests[repo] = enginetest.Push(t, ref, reg.user, reg.password)
		i++
	}
	scoped := h.addRegistry("scoped", "http://"+reg.host+"/"+ns+"/", reg.user, reg.password)
	whole := h.addRegistry("whole", reg.host, reg.user, reg.password)

	for _, n := range []int{1, 2, 100} {
		if got := h.catalogPages(scoped, n); !slices.Equal(got, []string{"a", "b/c"}) {
			t.Errorf("catalog of the namespace by pages of %d = %q, want [a b/c]", n, got)
		}
	}
	var search []searchResult
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&term=C", scoped), nil, &search)
	if len(search) != 1 || search[0].Name != "b/c" {
		t.Errorf("search of the namespace = %+v, want only b/c", search)
	}
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&term=outer", scoped), nil, &search)
	if len(search) != 0 {
		t.Errorf("search of the namespace found %+v outside it", search)
	}
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&term=ns-%s", whole, h.label), nil, &search)
	if len(search) != 3 || search[0].Name != ns+"/a" {
		t.Errorf("search without the namespace = %+v, want the three full names", search)
	}

	for _, repo := range []string{"a", "b/c"} {
		if tags := h.registryTags(scoped, repo); len(tags) != 1 || tags["v1"].Digest != digests[repo] {
			t.Errorf("tags of %s in the namespace = %+v, want v1 at %s", repo, tags, digests[repo])
		}
	}
	h.wantError(404, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&repository=%s", scoped, url.QueryEscape(ns+"/a")),
		"Repository or tag not found")

	var deleted struct{ Digest string }
	h.must(200, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=a&tag=v1", scoped), nil, &deleted)
	if deleted.Digest != digests["a"] {
		t.Errorf("delete of a:v1 in the namespace = %+v, want %s", deleted, digests["a"])
	}
	if tags := h.registryTags(whole, ns+"/a"); len(tags) != 0 {
		t.Errorf("tags of %s/a after its deletion in the namespace = %+v, want none", ns, tags)
	}
	// The rest is deleted from the registry too (its repositories stay, empty).
	h.must(200, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=b/c&tag=v1", scoped), nil, nil)
	h.must(200, "DELETE", fmt.Sprintf("/api/registry/image?registry=%d&repository=%s&tag=v1", whole, url.QueryEscape(ns+"x/outer")), nil, nil)

	bad := h.addRegistry("bad", reg.host+"/Team", reg.user, reg.password)
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/catalog?registry=%d", bad),
		"Registry URL path 'Team' is not a valid repository namespace (lowercase letters, digits and separators)")
}

// Without a registry, tags and search are Docker Hub's, through the
// configured index: here the local registry stands in for it (as a mirror
// would), with the credentials of the registry saved for its host. One-part
// names are library/ images; tags come in pages of pageSize; a saved
// Docker Hub registry goes the same way.
func TestRegistryBrowserDockerHubThroughTheIndex(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	enginetest.Require(t)
	h := startHarnessWith(t, apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		DockerHubIndex: "http://" + reg.host})
	name := "hub-" + h.label
	var ids [3]string
	enginetest.RemoveImages(t, h.label, &ids[0], &ids[1], &ids[2])
	digests := map[string]string{}
	for i, tag := range []string{"a1", "b2", "c3"} {
		ref := reg.host + "/library/" + name + ":" + tag
		ids[i] = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL berth.hub="+tag)
		digests[tag] = enginetest.Push(t, ref, reg.user, reg.password)
	}

	// Before the registry's credentials are saved, the index refuses.
	h.wantError(400, "GET", "/api/registry/tags?image="+name, "Authentication failed. Check registry credentials.")
	h.addRegistry("mirror", reg.host, reg.user, reg.password)

	var page registryTagPage
	h.must(200, "GET", "/api/registry/tags?image="+name+"&pageSize=2", nil, &page)
	if page.Total != 3 || page.Page != 1 || page.PageSize != 2 || !page.HasNext || page.HasPrev || len(page.Tags) != 2 ||
		page.Tags[0].Name != "a1" || page.Tags[1].Name != "b2" || page.Tags[0].Digest != digests["a1"] || page.Tags[0].Size <= 0 {
		t.Errorf("page 1 = %+v, want a1 and b2 of 3 with digests and sizes", page)
	}
	h.must(200, "GET", "/api/registry/tags?image=library/"+name+"&pageSize=2&page=2", nil, &page)
	if page.Total != 3 || page.Page != 2 || page.HasNext || !page.HasPrev || len(page.Tags) != 1 || page.Tags[0].Name != "c3" ||
		page.Tags[0].Digest != digests["c3"] {
		t.Errorf("page 2 = %+v, want c3 alone", page)
	}
	// Docker Hub's default page is 20 tags.
	h.must(200, "GET", "/api/registry/tags?repository="+name, nil, &page)
	if page.PageSize != 20 || page.Total != 3 || len(page.Tags) != 3 || page.HasNext {
		t.Errorf("default page = %+v, want the 3 tags in a page of 20", page)
	}
	h.wantError(404, "GET", "/api/registry/tags?image="+name+"-none", "Repository or tag not found")
	h.wantError(400, "GET", "/api/registry/tags", "Image name is required")

	var found []searchResult
	h.must(200, "GET", "/api/registry/search?term="+name, nil, &found)
	if len(found) != 1 || found[0] != (searchResult{Name: "library/" + name}) {
		t.Errorf("search = %+v, want library/%s", found, name)
	}
	h.wantError(400, "GET", "/api/registry/search", "Search term is required")

	// A saved Docker Hub registry is browsed through the index too.
	hub := h.addRegistry("hub", "docker.io", "", "")
	h.must(200, "GET", fmt.Sprintf("/api/registry/search?registry=%d&term=%s&limit=5", hub, name), nil, &found)
	if len(found) != 1 || found[0].Name != "library/"+name {
		t.Errorf("search of the saved Docker Hub registry = %+v, want library/%s", found, name)
	}
	h.must(200, "GET", fmt.Sprintf("/api/registry/tags?registry=%d&image=%s", hub, name), nil, &page)
	if page.Total != 3 {
		t.Errorf("tags of the saved Docker Hub registry = %+v, want 3", page)
	}
}

// tag-info reads one tag's manifest and configuration with the saved
// registry's credentials: digest, size, creation time, platform. Failures
// the registry answers are a reason, not an error (the reference's rule);
// a missing registry or parameter is.
func TestRegistryTagInfo(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	repo := "berth-test/taginfo-" + h.label
	var id string
	enginetest.RemoveImages(t, h.label, &id)
	id = enginetest.BuildImage(t, enginetest.Image(), reg.host+"/"+repo+":v1", h.label, "LABEL berth.taginfo=v1")
	digest := enginetest.Push(t, reg.host+"/"+repo+":v1", reg.user, reg.password)
	regID := h.addRegistry("local", reg.host, reg.user, reg.password)

	type platform struct{ OS, Architecture, Digest string }
	var info struct {
		Digest      string
		Size        *int64
		LastUpdated *time.Time
		Created     *time.Time
		Platforms   []platform
		Reason      *string
	}
	h.must(200, "GET", fmt.Sprintf("/api/registry/tag-info?registry=%d&image=%s&tag=v1", regID, url.QueryEscape(repo)), nil, &info)
	if info.Digest != digest || info.Size == nil || *info.Size <= 0 || info.Created == nil || info.LastUpdated == nil ||
		!info.LastUpdated.Equal(*info.Created) || info.Reason != nil || len(info.Platforms) != 1 ||
		info.Platforms[0].OS != "linux" || info.Platforms[0].Architecture == "" || info.Platforms[0].Digest != digest {
		t.Errorf("tag-info = %+v, want digest %s, size, created and one linux platform", info, digest)
	}
	// By digest, the same.
	h.must(200, "GET", fmt.Sprintf("/api/registry/tag-info?registry=%d&repository=%s&tag=%s", regID, url.QueryEscape(repo), digest), nil, &info)
	if info.Digest != digest || info.Size == nil {
		t.Errorf("tag-info by digest = %+v", info)
	}
	info.Reason = nil
	h.must(200, "GET", fmt.Sprintf("/api/registry/tag-info?registry=%d&image=%s&tag=none", regID, url.QueryEscape(repo)), nil, &info)
	if info.Reason == nil || *info.Reason != "Manifest not found" || info.Size != nil {
		t.Errorf("tag-info of a missing tag = %+v, want reason Manifest not found", info)
	}
	wrong := h.addRegistry("wrong", reg.host, reg.user, "not-the-password-"+h.label)
	info.Reason = nil
	h.must(200, "GET", fmt.Sprintf("/api/registry/tag-info?registry=%d&image=%s&tag=v1", wrong, url.QueryEscape(repo)), nil, &info)
	if info.Reason == nil || *info.Reason != "Authentication required" {
		t.Errorf("tag-info with wrong credentials = %+v, want reason Authentication required", info)
	}
	info.Reason = nil
	h.must(200, "GET", "/api/registry/tag-info?image=nginx&tag=latest", nil, &info)
	if info.Reason == nil || *info.Reason != "Not supported without a registry" {
		t.Errorf("tag-info without a registry = %+v", info)
	}
	h.wantError(400, "GET", fmt.Sprintf("/api/registry/tag-info?registry=%d&image=%s", regID, url.QueryEscape(repo)), "image and tag are required")
	h.wantError(404, "GET", "/api/registry/tag-info?registry=999999&image=a&tag=b", "Registry not found")
}

// TestRegistryTestReadsRegistryID: {registryId} (the reference's name) tests
// a saved registry with its saved credentials, the fields sent override the
// saved ones, and the saved password is never tried on another host.
func TestRegistryTestReadsRegistryID(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	var created struct{ ID int64 }
	h.must(201, "POST", "/api/registries", map[string]any{"name": "rt-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, &created)
	test := func(body map[string]any) map[string]any {
		t.Helper()
		var out map[string]any
		h.must(200, "POST", "/api/registries/test?env=1", body, &out)
		return out
	}
	if out := test(map[string]any{"registryId": created.ID}); out["success"] != true || out["connectivity"] != true ||
		out["authenticated"] != true || out["message"] != "Connected and authenticated as "+reg.user {
		t.Errorf("test of the saved registry = %v, want success with the reference's fields", out)
	}
	if out := test(map[string]any{"registryId": created.ID, "url": reg.host}); out["success"] != true {
		t.Errorf("test with the saved registry's own url = %v, want success", out)
	}
	for _, override := range []map[string]any{{"password": "wrong-" + h.label}, {"username": "nobody-" + h.label}} {
		override["registryId"] = created.ID
		if out := test(override); out["success"] != false || out["connectivity"] != true || out["authenticated"] != false {
			t.Errorf("test with %v = %v, want the field sent used (a failed login)", override, out)
		}
	}
	h.expectRefusals([]refusal{
		{"the saved password to another host", "POST", "/api/registries/test?env=1",
			map[string]any{"registryId": created.ID, "url": "https://registry.invalid"}, 403, "send it again"},
		{"registryId and id disagree", "POST", "/api/registries/test?env=1",
			map[string]any{"registryId": created.ID, "id": created.ID + 1}, 400, "registryId and id name different registries"},
		{"no such registry", "POST", "/api/registries/test?env=1", map[string]any{"registryId": created.ID + 1000}, 404, ""},
		{"registryId not a number", "POST", "/api/registries/test?env=1", map[string]any{"registryId": "one"}, 400, ""},
	})
}

// TestRegistryTestOutcomeIsKept: the last test of a saved registry, as
// saved, is kept and listed (success or failure, message, time); a test
// with fields overridden in the form is not kept, and a change of the
// registry forgets the outcome.
func TestRegistryTestOutcomeIsKept(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	type kept struct {
		Success  bool
		Message  string
		TestedAt time.Time
	}
	lastTest := func(id int64) *kept {
		t.Helper()
		var list []struct {
			ID       int64
			LastTest *kept
		}
		h.must(200, "GET", "/api/registries", nil, &list)
		for _, r := range list {
			if r.ID == id {
				return r.LastTest
			}
		}
		t.Fatalf("registry %d not listed", id)
		return nil
	}
	var good, bad struct{ ID int64 }
	h.must(201, "POST", "/api/registries", map[string]any{"name": "kept-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, &good)
	h.must(201, "POST", "/api/registries", map[string]any{"name": "kept-bad-" + h.label, "url": reg.host,
		"username": reg.user, "password": "wrong-" + h.label}, &bad)
	if got := lastTest(good.ID); got != nil {
		t.Errorf("last test of a new registry = %+v, want null", got)
	}
	before := time.Now().Add(-time.Second)
	h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"registryId": good.ID}, nil)
	got := lastTest(good.ID)
	if got == nil || !got.Success || got.Message != "Connected and authenticated as "+reg.user || got.TestedAt.Before(before) {
		t.Errorf("kept test = %+v, want the success with its message and time", got)
	}
	h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"id": good.ID, "password": "wrong-" + h.label}, nil)
	if got := lastTest(good.ID); got == nil || !got.Success {
		t.Errorf("kept test after a test with another password = %+v, want the saved settings' success kept", got)
	}
	h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"id": bad.ID}, nil)
	if got := lastTest(bad.ID); got == nil || got.Success || got.Message == "" {
		t.Errorf("kept failed test = %+v, want the failure with its message", got)
	}
	h.must(200, "PUT", fmt.Sprintf("/api/registries/%d", bad.ID), map[string]any{"name": "kept-bad-" + h.label,
		"url": reg.host, "username": reg.user, "password": reg.password}, nil)
	if got := lastTest(bad.ID); got != nil {
		t.Errorf("kept test after the registry changed = %+v, want null", got)
	}
}
