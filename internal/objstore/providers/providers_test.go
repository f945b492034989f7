package providers

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/objstoretest"
)

// TestProvidersListAndRead lists and reads objects through each
// provider's SDK against a real server of its kind, and finds a missing
// bucket as objstore.ErrNotFound.
func TestProvidersListAndRead(t *testing.T) {
	for _, p := range []struct {
		name  string
		start func(testing.TB) *objstoretest.Store
	}{
		{"s3", objstoretest.StartMinIO},
		{"gcs", objstoretest.StartFakeGCS},
		{"azure", objstoretest.StartAzurite},
	} {
		t.Run(p.name, func(t *testing.T) {
			store := p.start(t)
			for _, kv := range store.Env() { // the GCS emulator is reached through the client library's setting
				if k, v, _ := strings.Cut(kv, "="); k == "STORAGE_EMULATOR_HOST" {
					t.Setenv(k, v)
				}
			}
			store.Put(t, "repo/m/config.pbtxt", []byte(`name: "m"`))
			store.Put(t, "repo/m/1/model.bin", []byte("weights"))
			store.Put(t, "other/x", []byte("elsewhere"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			settings := Settings{Credentials: store.Credentials(t), AzureEndpoint: store.AzureEndpoint()}
			open := func(url string) objstore.Bucket {
				loc, err := objstore.ParseLocation(url)
				if err != nil {
					t.Fatal(err)
				}
				b, err := Open(ctx, loc, settings)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				return b
			}
			b := open(store.URL("repo"))
			objs, err := b.List(ctx, "repo/")
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 2 {
				t.Fatalf("listing of repo/: %+v", objs)
			}
			for _, o := range objs {
				if o.Tag == "" || o.Size == 0 || o.Modified.IsZero() {
					t.Errorf("object %+v lacks a tag, size or time", o)
				}
			}
			r, err := b.Open(ctx, "repo/m/1/model.bin")
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(data) != "weights" {
				t.Errorf("read: %q, %v", data, err)
			}
			if _, err := open(store.MissingBucketURL()).List(ctx, "models/"); !errors.Is(err, objstore.ErrNotFound) {
				t.Errorf("listing a missing bucket: %v, want ErrNotFound", err)
			}
		})
	}
}
