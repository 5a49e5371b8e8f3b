package ecs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Tag keys landlord sets on what it creates.
const (
	tagTenantID   = "landlord:tenant-id"
	tagTenantName = "landlord:tenant-name"
	tagManagedBy  = "landlord:managed-by"
	tagGeneration = "landlord:generation"
	// tagConfigHash fingerprints the service as landlord last set it.
	tagConfigHash = "landlord:config-hash"
	// tagTaskHash fingerprints the task definition a revision was
	// registered from, so that a retried register finds it.
	tagTaskHash = "landlord:task-hash"
	managedBy   = "landlord"
)

// maxName is ECS's limit on service names and task definition families.
const maxName = 255

// serviceName is <prefix><tenant name>, shortened with a hash of the whole
// when it is longer than ECS allows.
func serviceName(prefix, tenantName string) string {
	name := prefix + tenantName
	if len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:maxName-9] + "-" + hex.EncodeToString(sum[:4])
}

// clientToken is CreateService's idempotency token (at most 36 characters):
// the same for every attempt to create one generation of the tenant's
// service, and new once an earlier service of the name is gone
// (previous is that service's creation time).
func clientToken(tenantID string, generation int64, previous string) string {
	sum := sha256.Sum256([]byte(tenantID + "/" + strconv.FormatInt(generation, 10) + "/" + previous))
	return hex.EncodeToString(sum[:16])
}

// fingerprint is an HMAC-SHA256 of v's JSON form keyed with the install's
// key, for tags that anyone who may describe a resource can read.
func (p *Provider) fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("ecs: fingerprint: %v", err)) // SDK input types always marshal
	}
	return provider.Fingerprint(p.hashKey, b)
}

// tagsOf turns a map into ECS tags, sorted by key.
func tagsOf(m map[string]string) []types.Tag {
	tags := make([]types.Tag, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		tags = append(tags, types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return tags
}

// tagMap turns ECS tags into a map.
func tagMap(tags []types.Tag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// serviceTags are the tags of a tenant's service (and, propagated, its
// tasks): the tenant's own, then landlord's, which win.
func serviceTags(o tenantOptions, tenantID, tenantName string, generation int64, hash string) map[string]string {
	m := maps.Clone(o.Tags)
	if m == nil {
		m = map[string]string{}
	}
	m[tagTenantID] = tenantID
	m[tagTenantName] = tenantName
	m[tagManagedBy] = managedBy
	m[tagGeneration] = strconv.FormatInt(generation, 10)
	m[tagConfigHash] = hash
	return m
}
