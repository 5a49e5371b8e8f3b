package ecsfake

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// containerDefaults returns the container definitions of a registration as
// ECS stores and describes them: with the defaults the API reference gives
// for members left out, so that a client comparing what it registered with
// what it reads back meets them as it would on ECS. It copies what it
// changes; the request's slices are not stored as they are.
func containerDefaults(defs []types.ContainerDefinition, mode types.NetworkMode) ([]types.ContainerDefinition, error) {
	out := make([]types.ContainerDefinition, len(defs))
	for i, d := range defs {
		// essential: "If this parameter is omitted, a container is assumed
		// to be essential."
		// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html)
		if d.Essential == nil {
			d.Essential = aws.Bool(true)
		}
		if len(d.PortMappings) > 0 {
			ports := make([]types.PortMapping, len(d.PortMappings))
			for j, m := range d.PortMappings {
				// protocol: "If a protocol isn't specified, the default is
				// tcp."
				// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_PortMapping.html)
				if m.Protocol == "" {
					m.Protocol = types.TransportProtocolTcp
				}
				// hostPort: "If you use containers in a task with the awsvpc or
				// host network mode, the hostPort can either be left blank or
				// set to the same value as the containerPort." (same page)
				if mode == types.NetworkModeAwsvpc || mode == types.NetworkModeHost {
					switch {
					case aws.ToInt32(m.HostPort) == 0:
						m.HostPort = m.ContainerPort
					case aws.ToInt32(m.HostPort) != aws.ToInt32(m.ContainerPort):
						return nil, clientError("When networkMode=%s, the host ports and container ports in port mappings must match.", mode)
					}
				}
				ports[j] = m
			}
			d.PortMappings = ports
		}
		if h := d.HealthCheck; h != nil {
			// "interval … The default value is 30 seconds.", "timeout … The
			// default value is 5.", "retries … The default value is 3."
			// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_HealthCheck.html)
			hc := *h
			if hc.Interval == nil {
				hc.Interval = aws.Int32(30)
			}
			if hc.Timeout == nil {
				hc.Timeout = aws.Int32(5)
			}
			if hc.Retries == nil {
				hc.Retries = aws.Int32(3)
			}
			d.HealthCheck = &hc
		}
		out[i] = d
	}
	return out, nil
}
