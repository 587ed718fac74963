package v1

// DefaultContainerResourcePolicy is the containerName of the policy for every container without its own.
const DefaultContainerResourcePolicy = "*"

// PolicyIndex is the one rule for which of n container policies applies to a container (upstream VPA's):
// the first one named after the container, else the last one named "*"; -1 when none does. name(i) is the
// i-th policy's containerName. An empty containerName names no container.
func PolicyIndex(n int, name func(i int) string, container string) int {
	wildcard := -1
	for i := range n {
		switch name(i) {
		case container:
			return i
		case DefaultContainerResourcePolicy:
			wildcard = i
		}
	}
	return wildcard
}

// PolicyFor returns the container policy of rp that applies to container (PolicyIndex); nil when none does.
func (rp *PodResourcePolicy) PolicyFor(container string) *ContainerResourcePolicy {
	if rp == nil {
		return nil
	}
	i := PolicyIndex(len(rp.ContainerPolicies), func(i int) string { return rp.ContainerPolicies[i].ContainerName }, container)
	if i < 0 {
		return nil
	}
	return &rp.ContainerPolicies[i]
}
