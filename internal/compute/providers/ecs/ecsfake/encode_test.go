package ecsfake

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// populate fills every exported field reachable from v with a value, so a
// round trip shows which members the encoder or decoder would lose. Unions
// (interfaces) are left nil.
func populate(v reflect.Value, depth int) {
	if depth > 30 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		populate(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(t0.Add(1234 * time.Millisecond)))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && f.Name != "ResultMetadata" {
				populate(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("blob"))
			return
		}
		if v.Type().Elem().Kind() == reflect.Interface {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		populate(v.Index(0), depth+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		populate(e, depth+1)
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.String:
		v.SetString("v-" + v.Type().Name())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
}

func populated[T any]() *T {
	v := new(T)
	populate(reflect.ValueOf(v).Elem(), 0)
	return v
}

// TestEncodeRoundTrip serves fully populated SDK output structs through the
// encoder and reads them back with the real client: every member must
// survive, which proves the wire names and timestamp format are ECS's.
func TestEncodeRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var body any
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b, err := encodeJSON(body)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	}))
	defer hs.Close()
	s := New(Options{})
	s.URL = hs.URL
	c := s.Client(context.Background())
	ctx := context.Background()
	serve := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		body = v
	}
	opts := cmp.Options{ignoreNoSerde, cmpopts.IgnoreFields(ecs.DescribeServicesOutput{}, "ResultMetadata"),
		cmpopts.IgnoreFields(ecs.DescribeTasksOutput{}, "ResultMetadata"),
		cmpopts.IgnoreFields(ecs.DescribeTaskDefinitionOutput{}, "ResultMetadata"),
		cmpopts.EquateApproxTime(time.Millisecond)}

	tests := []struct {
		name string
		want any
		call func() (any, error)
	}{
		{
			name: "DescribeServices with a full types.Service",
			want: &ecs.DescribeServicesOutput{Services: []types.Service{*populated[types.Service]()}, Failures: []types.Failure{*populated[types.Failure]()}},
			call: func() (any, error) {
				return c.DescribeServices(ctx, &ecs.DescribeServicesInput{Services: []string{"x"}})
			},
		},
		{
			name: "DescribeTasks with a full types.Task",
			want: &ecs.DescribeTasksOutput{Tasks: []types.Task{*populated[types.Task]()}},
			call: func() (any, error) {
				return c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Tasks: []string{"x"}})
			},
		},
		{
			name: "DescribeTaskDefinition with a full types.TaskDefinition",
			want: &ecs.DescribeTaskDefinitionOutput{TaskDefinition: populated[types.TaskDefinition](), Tags: []types.Tag{*populated[types.Tag]()}},
			call: func() (any, error) {
				return c.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String("x")})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serve(tt.want)
			got, err := tt.call()
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, opts); diff != "" {
				t.Errorf("round trip (-sent +read):\n%s", diff)
			}
		})
	}
}

func TestWriteEpoch(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"whole seconds", time.Unix(1700000000, 0), "1700000000.000"},
		{"milliseconds", time.UnixMilli(1700000000123), "1700000000.123"},
		{"before the epoch", time.UnixMilli(-1500), "-2.500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeJSON(struct{ At time.Time }{tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"at":` + tt.want + `}`; string(got) != want {
				t.Errorf("encodeJSON = %s, want %s", got, want)
			}
		})
	}
}

// TestDecodeSDKRequests sends fully populated inputs for every operation the
// fake implements through the real client, and decodes them back into the
// SDK's input structs as the fake does: nothing the SDK sends may be unknown
// to the decoder or lost by it.
func TestDecodeSDKRequests(t *testing.T) {
	var mu sync.Mutex
	var decoded any
	var decodeErr error
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		in := reflect.New(reflect.TypeOf(decoded).Elem())
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = decodeInput(body, in.Interface())
		}
		decodeErr = err
		decoded = in.Interface()
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte("{}"))
	}))
	defer hs.Close()
	s := New(Options{})
	s.URL = hs.URL
	c := s.Client(context.Background())
	ctx := context.Background()

	tests := []struct {
		name string
		in   any
		call func(in any) error
	}{
		{"CreateService", populated[ecs.CreateServiceInput](), func(in any) error {
			_, err := c.CreateService(ctx, in.(*ecs.CreateServiceInput))
			return err
		}},
		{"UpdateService", populated[ecs.UpdateServiceInput](), func(in any) error {
			_, err := c.UpdateService(ctx, in.(*ecs.UpdateServiceInput))
			return err
		}},
		{"DeleteService", populated[ecs.DeleteServiceInput](), func(in any) error {
			_, err := c.DeleteService(ctx, in.(*ecs.DeleteServiceInput))
			return err
		}},
		{"DescribeServices", populated[ecs.DescribeServicesInput](), func(in any) error {
			_, err := c.DescribeServices(ctx, in.(*ecs.DescribeServicesInput))
			return err
		}},
		{"ListServices", populated[ecs.ListServicesInput](), func(in any) error {
			_, err := c.ListServices(ctx, in.(*ecs.ListServicesInput))
			return err
		}},
		{"RegisterTaskDefinition", populated[ecs.RegisterTaskDefinitionInput](), func(in any) error {
			_, err := c.RegisterTaskDefinition(ctx, in.(*ecs.RegisterTaskDefinitionInput))
			return err
		}},
		{"DeregisterTaskDefinition", populated[ecs.DeregisterTaskDefinitionInput](), func(in any) error {
			_, err := c.DeregisterTaskDefinition(ctx, in.(*ecs.DeregisterTaskDefinitionInput))
			return err
		}},
		{"DescribeTaskDefinition", populated[ecs.DescribeTaskDefinitionInput](), func(in any) error {
			_, err := c.DescribeTaskDefinition(ctx, in.(*ecs.DescribeTaskDefinitionInput))
			return err
		}},
		{"ListTasks", populated[ecs.ListTasksInput](), func(in any) error {
			_, err := c.ListTasks(ctx, in.(*ecs.ListTasksInput))
			return err
		}},
		{"DescribeTasks", populated[ecs.DescribeTasksInput](), func(in any) error {
			_, err := c.DescribeTasks(ctx, in.(*ecs.DescribeTasksInput))
			return err
		}},
		{"TagResource", populated[ecs.TagResourceInput](), func(in any) error {
			_, err := c.TagResource(ctx, in.(*ecs.TagResourceInput))
			return err
		}},
		{"DescribeClusters", populated[ecs.DescribeClustersInput](), func(in any) error {
			_, err := c.DescribeClusters(ctx, in.(*ecs.DescribeClustersInput))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			decoded, decodeErr = tt.in, nil
			mu.Unlock()
			if err := tt.call(tt.in); err != nil {
				t.Fatalf("call: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if decodeErr != nil {
				t.Fatalf("decode: %v", decodeErr)
			}
			if diff := cmp.Diff(tt.in, decoded, ignoreNoSerde); diff != "" {
				t.Errorf("decoded request (-sent +decoded):\n%s", diff)
			}
		})
	}
}
