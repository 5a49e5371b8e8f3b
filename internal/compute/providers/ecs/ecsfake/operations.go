package ecsfake

// operations are the ECS operations the fake implements, by the name in
// X-Amz-Target. Anything else is an UnknownOperationException, so a client
// that starts calling something new finds out in its tests.
var operations = map[string]operation{
	"CreateService":            handle((*Server).createService),
	"UpdateService":            handle((*Server).updateService),
	"DeleteService":            handle((*Server).deleteService),
	"DescribeServices":         handle((*Server).describeServices),
	"ListServices":             handle((*Server).listServices),
	"RegisterTaskDefinition":   handle((*Server).registerTaskDefinition),
	"DeregisterTaskDefinition": handle((*Server).deregisterTaskDefinition),
	"DescribeTaskDefinition":   handle((*Server).describeTaskDefinition),
	"ListTasks":                handle((*Server).listTasks),
	"DescribeTasks":            handle((*Server).describeTasks),
	"StopTask":                 handle((*Server).stopTaskCall),
	"TagResource":              handle((*Server).tagResource),
	"DescribeClusters":         handle((*Server).describeClusters),
	"ListTaskDefinitions":      handle((*Server).listTaskDefinitions),
}
