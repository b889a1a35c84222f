package kubeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/rest"
)

// Host is the URL the facade's rest.Config names; no request ever leaves the process.
const Host = "http://kubeapi.egharness.invalid"

// Facade serves the Kubernetes REST API over a Store, in process: create, get, list (label
// selectors), update, patch (JSON merge, JSON and strategic merge), delete, the status
// subresource, and Pod logs.
type Facade struct {
	Store  *Store
	Mapper meta.RESTMapper
	Scheme *runtime.Scheme
	// Logs answers GET .../pods/NAME/log (nil: 404).
	Logs func(namespace, pod string) ([]byte, error)
}

// RestConfig is a rest.Config whose transport is the facade itself. JSON only: the
// facade speaks neither protobuf nor CBOR.
func (f *Facade) RestConfig() *rest.Config {
	return &rest.Config{
		Host:      Host,
		Transport: roundTripperFunc(f.roundTrip),
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeJSON,
			AcceptContentTypes: runtime.ContentTypeJSON},
		QPS:                -1, // no client-side rate limiting
		DisableCompression: true,
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (f *Facade) roundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// target is what one request path names.
type target struct {
	gvr         schema.GroupVersionResource
	gvk         schema.GroupVersionKind
	namespaced  bool
	namespace   string
	name        string
	subresource string
}

// parse reads /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]] and
// /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]].
func (f *Facade) parse(path string) (*target, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var gv schema.GroupVersion
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		gv, parts = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return nil, apierrors.NewNotFound(schema.GroupResource{}, path)
	}
	t := &target{}
	// namespaces/NS/RESOURCE... is a namespaced resource unless RESOURCE is a subresource
	// of the Namespace itself (namespaces/NS/status).
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		t.namespace, parts = parts[1], parts[2:]
	}
	t.gvr = gv.WithResource(parts[0])
	if len(parts) > 1 {
		t.name = parts[1]
	}
	if len(parts) > 2 {
		t.subresource = strings.Join(parts[2:], "/")
	}
	gvk, err := f.Mapper.KindFor(t.gvr)
	if err != nil {
		return nil, apierrors.NewNotFound(t.gvr.GroupResource(), "the server could not find the requested resource")
	}
	t.gvk = gvk
	m, err := f.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, apierrors.NewNotFound(t.gvr.GroupResource(), "the server could not find the requested resource")
	}
	t.namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
	return t, nil
}

func (t *target) key() Key {
	return Key{GroupKind: t.gvk.GroupKind(), Namespace: t.namespace, Name: t.name}
}

// ServeHTTP answers one API request.
func (f *Facade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, err := f.parse(r.URL.Path)
	if err != nil {
		writeErr(w, err)
		return
	}
	if ct := r.Header.Get("Content-Type"); r.Body != nil && r.Method != http.MethodGet && ct != "" &&
		!strings.Contains(ct, "json") {
		writeErr(w, unsupportedMedia(ct))
		return
	}
	switch {
	case r.Method == http.MethodGet && t.subresource == "log" && t.gvk.Kind == "Pod":
		f.serveLog(w, t)
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") != "":
		writeErr(w, apierrors.NewMethodNotSupported(t.gvr.GroupResource(), "watch"))
	case r.Method == http.MethodGet && t.name == "":
		f.serveList(w, r, t)
	case r.Method == http.MethodGet:
		f.reply(f.Store.Get(t.key(), t.gvk.GroupVersion().String()))(w)
	case r.Method == http.MethodPost && t.name == "":
		u, err := f.body(r, t)
		if err != nil {
			writeErr(w, err)
			return
		}
		created, err := f.Store.Create(u)
		f.replyCode(created, err, http.StatusCreated)(w)
	case r.Method == http.MethodPut && t.name != "":
		u, err := f.body(r, t)
		if err != nil {
			writeErr(w, err)
			return
		}
		u.SetName(t.name)
		f.reply(f.Store.Update(u, t.subresource == "status"))(w)
	case r.Method == http.MethodPatch && t.name != "":
		f.servePatch(w, r, t)
	case r.Method == http.MethodDelete && t.name != "":
		f.reply(f.Store.Delete(t.key()))(w)
	default:
		writeErr(w, apierrors.NewMethodNotSupported(t.gvr.GroupResource(), r.Method))
	}
}

// body decodes a request's object and checks it is the one the path names.
func (f *Facade) body(r *http.Request, t *target) (*unstructured.Unstructured, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a Kubernetes object: %v", err))
	}
	if u.GroupVersionKind().GroupKind() != t.gvk.GroupKind() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, the path names %s", u.GroupVersionKind(), t.gvr))
	}
	if t.namespaced {
		if u.GetNamespace() == "" {
			u.SetNamespace(t.namespace)
		}
		if u.GetNamespace() != t.namespace {
			return nil, apierrors.NewBadRequest(
				"the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		u.SetNamespace("")
	}
	return u, nil
}

func (f *Facade) serveList(w http.ResponseWriter, r *http.Request, t *target) {
	sel := labels.Everything()
	if s := r.URL.Query().Get("labelSelector"); s != "" {
		var err error
		if sel, err = labels.Parse(s); err != nil {
			writeErr(w, apierrors.NewBadRequest(err.Error()))
			return
		}
	}
	items := f.Store.List(t.gvk.GroupKind(), t.namespace, sel, t.gvk.GroupVersion().String())
	if fs := r.URL.Query().Get("fieldSelector"); fs != "" {
		var kept []*unstructured.Unstructured
		for _, u := range items {
			if fieldsMatch(fs, u) {
				kept = append(kept, u)
			}
		}
		items = kept
	}
	list := map[string]any{
		"apiVersion": t.gvk.GroupVersion().String(),
		"kind":       t.gvk.Kind + "List",
		"metadata":   map[string]any{"resourceVersion": f.Store.ResourceVersion()},
	}
	objs := make([]any, len(items))
	for i, u := range items {
		objs[i] = u.Object
	}
	list["items"] = objs
	writeJSON(w, http.StatusOK, list)
}

// fieldsMatch handles the field selectors clients send most: metadata.name and
// metadata.namespace, with = or ==, comma-separated.
func fieldsMatch(sel string, u *unstructured.Unstructured) bool {
	for _, term := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(strings.Replace(term, "==", "=", 1), "=")
		if !ok {
			continue
		}
		switch k {
		case "metadata.name":
			if u.GetName() != v {
				return false
			}
		case "metadata.namespace":
			if u.GetNamespace() != v {
				return false
			}
		}
	}
	return true
}

func (f *Facade) servePatch(w http.ResponseWriter, r *http.Request, t *target) {
	patch, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	cur, err := f.Store.Get(t.key(), t.gvk.GroupVersion().String())
	if err != nil {
		writeErr(w, err)
		return
	}
	orig, err := cur.MarshalJSON()
	if err != nil {
		writeErr(w, apierrors.NewInternalError(err))
		return
	}
	var out []byte
	switch types.PatchType(r.Header.Get("Content-Type")) {
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(orig, patch)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(patch); err == nil {
			out, err = p.Apply(orig)
		}
	case types.StrategicMergePatchType:
		typed, terr := f.Scheme.New(t.gvk)
		if terr != nil {
			// The API server refuses strategic merge for custom resources.
			writeErr(w, unsupportedMedia(string(types.StrategicMergePatchType)))
			return
		}
		out, err = strategicpatch.StrategicMergePatch(orig, patch, typed)
	default:
		writeErr(w, unsupportedMedia(r.Header.Get("Content-Type")))
		return
	}
	if err != nil {
		writeErr(w, apierrors.NewBadRequest(fmt.Sprintf("the patch cannot be applied: %v", err)))
		return
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		writeErr(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	// A patch that does not set a resourceVersion applies to the latest one.
	var sent struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(patch, &sent)
	if sent.Metadata.ResourceVersion == "" {
		u.SetResourceVersion("")
	}
	f.reply(f.Store.Update(u, t.subresource == "status"))(w)
}

func (f *Facade) serveLog(w http.ResponseWriter, t *target) {
	if f.Logs == nil {
		writeErr(w, apierrors.NewNotFound(t.gvr.GroupResource(), t.name))
		return
	}
	if _, err := f.Store.Get(t.key(), ""); err != nil {
		writeErr(w, err)
		return
	}
	b, err := f.Logs(t.namespace, t.name)
	if err != nil {
		writeErr(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (f *Facade) reply(u *unstructured.Unstructured, err error) func(http.ResponseWriter) {
	return f.replyCode(u, err, http.StatusOK)
}

func (f *Facade) replyCode(u *unstructured.Unstructured, err error, code int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, code, u.Object)
	}
}

func writeErr(w http.ResponseWriter, err error) {
	st := apierrors.APIStatus(nil)
	if !errorsAs(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	writeJSON(w, int(s.Code), s)
}

func errorsAs(err error, st *apierrors.APIStatus) bool {
	if s, ok := err.(apierrors.APIStatus); ok {
		*st = s
		return true
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: err.Error()})
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// unsupportedMedia is the API server's 415.
func unsupportedMedia(ct string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf(
			"the body of the request was in an unknown format - accepted media types are application/json; got %s", ct),
	}}
}
