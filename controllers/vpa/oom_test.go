package vpa

import "testing"

func TestParseMemoryEviction(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want []MemoryEviction
	}{
		"kubelet message, request form": {
			msg:  "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 1Gi, request is 512Mi, has larger consumption of memory. Container sidecar was using 300Mi, request is 100Mi, has larger consumption of memory.",
			want: []MemoryEviction{{"app", 1 << 30, 512 << 20}, {"sidecar", 300 << 20, 100 << 20}},
		},
		"older message form": {
			msg:  "The node was low on resource: memory. Container worker was using 2Gi, which exceeds its request of 1Gi.",
			want: []MemoryEviction{{"worker", 2 << 30, 1 << 30}},
		},
		"not about memory":    {msg: "The node was low on resource: ephemeral-storage. Container app was using 5Gi, request is 0, has larger consumption of ephemeral-storage."},
		"unparseable amounts": {msg: "The node was low on resource: memory. Container app was using lots, request is some."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseMemoryEviction(tc.msg)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("eviction %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
