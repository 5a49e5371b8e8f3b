package ecs

import (
	"errors"
	"regexp"
	"slices"
	"strings"
)

// arn is an Amazon Resource Name, arn:partition:service:region:account:resource.
type arn struct {
	Partition, Service, Region, Account, Resource string
}

var (
	partitions = []string{"aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc"}
	accountID  = regexp.MustCompile(`^[0-9]{12}$`)
	regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
)

var errNotARN = errors.New("not an ARN")

// parseARN splits s into its parts; it checks the partition, and the region
// and account where the service has them.
func parseARN(s string) (arn, error) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return arn{}, errNotARN
	}
	a := arn{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}
	switch {
	case !slices.Contains(partitions, a.Partition):
		return arn{}, errors.New("unknown partition " + a.Partition)
	case a.Region != "" && !regionName.MatchString(a.Region):
		return arn{}, errors.New("region " + a.Region + " is not a region name such as us-west-2")
	case a.Account != "" && !accountID.MatchString(a.Account):
		return arn{}, errors.New("account " + a.Account + " is not a 12-digit account id")
	case a.Resource == "":
		return arn{}, errors.New("no resource")
	}
	return a, nil
}

// String is the ARN again.
func (a arn) String() string {
	return strings.Join([]string{"arn", a.Partition, a.Service, a.Region, a.Account, a.Resource}, ":")
}

// typed returns the resource's name when its type is kind
// ("cluster/landlord" → "landlord").
func (a arn) typed(kind string) (string, bool) {
	name, ok := strings.CutPrefix(a.Resource, kind+"/")
	return name, ok && name != ""
}
