package ecsfake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/smithy-go"
)

func TestMalformNext(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 1))
	s.Advance(time.Second)
	list, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("svc")})
	if err != nil || len(list.TaskArns) != 1 {
		t.Fatalf("ListTasks: %+v %v", list, err)
	}
	describe := func() error {
		_, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("landlord"), Tasks: list.TaskArns})
		return err
	}

	s.MalformNext("DescribeTasks", 1)
	var de *smithy.DeserializationError
	if err := describe(); !errors.As(err, &de) {
		t.Fatalf("malformed DescribeTasks: %T %v, want a *smithy.DeserializationError", err, err)
	} else if !strings.Contains(err.Error(), "expected string, got 256") {
		t.Errorf("malformed DescribeTasks: %v, want the number 256 where cpu's string belongs", err)
	}
	if err := describe(); err != nil {
		t.Errorf("DescribeTasks after the malformed one: %v", err)
	}

	// An answer with no numeric string goes out as an array; the call
	// still takes effect.
	s.MalformNext("*", 1)
	in := serviceInput("svc2", "app", 0)
	if _, err := c.CreateService(ctx, in); !errors.As(err, &de) {
		t.Errorf("malformed CreateService: %T %v, want a *smithy.DeserializationError", err, err)
	}
	if svc := mustDescribe(t, c, "svc2"); aws.ToString(svc.Status) != "ACTIVE" {
		t.Errorf("service behind the malformed answer: %+v", svc)
	}
	s.MalformNext("ListServices", 1)
	if _, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord")}); !errors.As(err, &de) {
		t.Errorf("malformed ListServices: %T %v, want a *smithy.DeserializationError", err, err)
	}

	// A refused call uses nothing up.
	s.MalformNext("DescribeServices", 1)
	if _, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("nope"), Services: []string{"svc"}}); err == nil || errors.As(err, &de) {
		t.Errorf("DescribeServices of an unknown cluster: %v, want ClusterNotFoundException", err)
	}
	if _, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("landlord"), Services: []string{"svc"}}); !errors.As(err, &de) {
		t.Errorf("DescribeServices after a refusal: %v, want the pending malformed answer", err)
	}
}

func TestMalformKeepsNumbersAndOrder(t *testing.T) {
	got, err := malform([]byte(`{"tasks":[{"cpu":"256","memory":"512","name":"app","version":3,"at":1772366400.5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tasks":[{"at":1772366400.5,"cpu":256,"memory":512,"name":"app","version":3}]}`
	if string(got) != want {
		t.Errorf("malform = %s, want %s", got, want)
	}
	got, err = malform([]byte(`{"serviceArns":["arn:aws:ecs:us-west-2:1:service/a/b"]}`))
	if err != nil || string(got) != `[{"serviceArns":["arn:aws:ecs:us-west-2:1:service/a/b"]}]` {
		t.Errorf("malform without numeric strings = %s %v", got, err)
	}
}
