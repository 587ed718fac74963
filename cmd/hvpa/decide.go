package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// decideState is the --state file of `hvpa decide` (a public contract: docs/cli.md).
type decideState struct {
	// Now is the decision time (RFC 3339); default: the current time.
	Now *metav1.Time `json:"now,omitempty"`
	// Replicas is the target's current replica count (required).
	Replicas *int32 `json:"replicas"`
	// Containers are the current per-pod requests and limits.
	Containers []hvpav1alpha1.ContainerResources `json:"containers"`
	// Recommendation is the recommender's per-container recommendation (target, uncappedTarget).
	Recommendation []vpav1.RecommendedContainerResources `json:"recommendation,omitempty"`
	// HPA is the HPA's desired replicas and, when they did not just change, the per-pod basis recorded when
	// they last changed (left out: the current requests are the basis).
	HPA *struct {
		DesiredReplicas int32                             `json:"desiredReplicas"`
		Basis           []hvpav1alpha1.ContainerResources `json:"basis,omitempty"`
	} `json:"hpa,omitempty"`
	LastScaleTime       *metav1.Time `json:"lastScaleTime,omitempty"`
	OOMSinceLastScaling bool         `json:"oomSinceLastScaling,omitempty"`
	LimitRange          *struct {
		Container *minMax `json:"container,omitempty"`
		Pod       *minMax `json:"pod,omitempty"`
	} `json:"limitRange,omitempty"`
}

type minMax struct {
	Min corev1.ResourceList `json:"min,omitempty"`
	Max corev1.ResourceList `json:"max,omitempty"`
}

// values converts the bounds; a nil minMax has none.
func (m *minMax) values(p *field.Path) (lo, hi scaling.Values, errs field.ErrorList) {
	if m == nil {
		return lo, hi, nil
	}
	lo, errs = scaling.FromResourceList(m.Min, p.Child("min"))
	hi, e := scaling.FromResourceList(m.Max, p.Child("max"))
	return lo, hi, append(errs, e...)
}

// decideOutput is what `hvpa decide` prints: the decision in the shapes the Hvpa status uses.
type decideOutput struct {
	Replicas struct {
		Current int32 `json:"current"`
		Desired int32 `json:"desired"`
		Applied int32 `json:"applied"`
		// HPAFloor is set when the HPA's desired replicas are a floor (metrics other than Utilization).
		HPAFloor int32 `json:"hpaFloor,omitempty"`
	} `json:"replicas"`
	Changed                   bool                                    `json:"changed"`
	Urgent                    bool                                    `json:"urgent,omitempty"`
	Desired                   *hvpav1alpha1.DesiredState              `json:"desired"`
	Wanted                    []hvpav1alpha1.ContainerResources       `json:"wanted,omitempty"`
	Notes                     map[string][]string                     `json:"notes,omitempty"`
	Blocked                   []hvpav1alpha1.BlockedPart              `json:"blocked,omitempty"`
	Conditions                []scaling.Condition                     `json:"conditions"`
	HPA                       *hvpav1alpha1.HpaStatus                 `json:"hpa,omitempty"`
	EffectiveScalingIntervals []hvpav1alpha1.EffectiveScalingInterval `json:"effectiveScalingIntervals"`
}

func newDecideCommand() *cobra.Command {
	var file, stateFile, output string
	cmd := &cobra.Command{
		Use:   "decide -f hvpa.yaml --state state.yaml [-o yaml|json]",
		Short: "Print the decision an Hvpa makes for a given state",
		Long: `Print the decision an Hvpa makes for a given state: the totals and the intervals they chose, the
desired and applied replicas, the per-container requests and limits (the sizing intent), every blocked part
with its reason, and the conditions. The same code decides in the cluster. The state file format is in
docs/cli.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, spec, err := loadHvpa(file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			st, err := loadState(stateFile, cmd.InOrStdin())
			if err != nil {
				return err
			}
			d, err := scaling.Decide(spec, st)
			if err != nil {
				return err
			}
			out := render(d)
			switch output {
			case "yaml", "":
				b, err := yaml.Marshal(out)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			return fmt.Errorf("--output %q is not supported: use yaml or json", output)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "file holding the Hvpa (YAML or JSON; - for standard input)")
	cmd.Flags().StringVar(&stateFile, "state", "", "file holding the observed state (YAML or JSON; - for standard input)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	_ = cmd.MarkFlagRequired("file")
	_ = cmd.MarkFlagRequired("state")
	return cmd
}

func loadState(path string, stdin io.Reader) (scaling.State, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return scaling.State{}, err
	}
	var in decideState
	if err := strictDecode(data, &in); err != nil {
		return scaling.State{}, fmt.Errorf("%s: %w", path, err)
	}
	st, errs := in.toState()
	if len(errs) > 0 {
		return scaling.State{}, fieldErrors(path, errs)
	}
	return st, nil
}

func (in decideState) toState() (scaling.State, field.ErrorList) {
	var errs, e field.ErrorList
	values := func(l corev1.ResourceList, p *field.Path) scaling.Values {
		v, e := scaling.FromResourceList(l, p)
		errs = append(errs, e...)
		return v
	}
	st := scaling.State{Now: time.Now(), OOMSinceLastScaling: in.OOMSinceLastScaling}
	if in.Now != nil {
		st.Now = in.Now.Time
	}
	switch {
	case in.Replicas == nil:
		errs = append(errs, field.Required(field.NewPath("replicas"), "the target's current replica count"))
	case *in.Replicas < 0:
		errs = append(errs, field.Invalid(field.NewPath("replicas"), *in.Replicas, "must not be negative"))
	default:
		st.Replicas = *in.Replicas
	}
	for i, c := range in.Containers {
		p := field.NewPath("containers").Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "the container name"))
		}
		st.Containers = append(st.Containers, scaling.Container{Name: c.Name,
			Requests: values(c.Requests, p.Child("requests")), Limits: values(c.Limits, p.Child("limits"))})
	}
	for i, r := range in.Recommendation {
		p := field.NewPath("recommendation").Index(i)
		st.Recommendation = append(st.Recommendation, scaling.Recommendation{Name: r.ContainerName,
			Target: values(r.Target, p.Child("target")), UncappedTarget: values(r.UncappedTarget, p.Child("uncappedTarget"))})
	}
	if in.HPA != nil {
		p := field.NewPath("hpa")
		if in.HPA.DesiredReplicas < 0 {
			errs = append(errs, field.Invalid(p.Child("desiredReplicas"), in.HPA.DesiredReplicas, "must not be negative"))
		}
		st.HPA = &scaling.HPAInput{Desired: in.HPA.DesiredReplicas}
		for i, b := range in.HPA.Basis {
			if st.HPA.Basis == nil {
				st.HPA.Basis = map[string]scaling.Values{}
			}
			st.HPA.Basis[b.Name] = values(b.Requests, p.Child("basis").Index(i).Child("requests"))
		}
	}
	if in.LastScaleTime != nil {
		t := in.LastScaleTime.Time
		st.LastScaleTime = &t
	}
	if lr := in.LimitRange; lr != nil {
		st.LimitRange = &scaling.LimitRange{}
		p := field.NewPath("limitRange")
		st.LimitRange.ContainerMin, st.LimitRange.ContainerMax, e = lr.Container.values(p.Child("container"))
		errs = append(errs, e...)
		st.LimitRange.PodMin, st.LimitRange.PodMax, e = lr.Pod.values(p.Child("pod"))
		errs = append(errs, e...)
	}
	return st, errs
}

func render(d scaling.Decision) decideOutput {
	var out decideOutput
	out.Replicas.Current, out.Replicas.Desired, out.Replicas.Applied, out.Replicas.HPAFloor = d.CurrentReplicas, d.DesiredReplicas, d.Replicas, d.HPAFloor
	out.Changed, out.Urgent = d.Changed, d.Urgent
	out.Desired = d.DesiredState()
	for _, c := range d.Containers {
		out.Wanted = append(out.Wanted, hvpav1alpha1.ContainerResources{Name: c.Name, Requests: scaling.ToResourceList(c.Wanted)})
		if len(c.Notes) > 0 {
			if out.Notes == nil {
				out.Notes = map[string][]string{}
			}
			out.Notes[c.Name] = scaling.NoteTexts(c.Notes)
		}
	}
	out.Blocked = d.BlockedParts()
	out.Conditions = d.Conditions
	out.HPA = d.HPAStatus(nil)
	out.EffectiveScalingIntervals = scaling.IntervalStatus(d.Intervals)
	return out
}
