package closedloop

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strconv"
	"time"

	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// Profile is a demand shape of the shoot-out (ProfileDemand).
type Profile string

// The profiles: the demand level of a workload over time, as a factor of its size (about 1 on average), with
// per-minute noise of 8 to 20%.
const (
	// ProfileWeb: a noisy diurnal web service, +-60% around the size (peak 14:00, trough 02:00), noise 15%.
	ProfileWeb Profile = "web"
	// ProfileSpiky: a steady level (+-20% over the day) with spikes of 3 to 6x lasting 2 to 8 minutes, about
	// one every 45 minutes; noise 12%.
	ProfileSpiky Profile = "spiky"
	// ProfileWeekly: the web curve on weekdays, a fifth of it at weekends (the trace starts on a Monday); noise
	// 12%.
	ProfileWeekly Profile = "weekly"
	// ProfileFlash: a mild diurnal curve (+-30%) and a flash crowd of 5x for two hours (day 2, 14:00 to 16:00,
	// rising over 5 minutes, falling over 10); noise 10%.
	ProfileFlash Profile = "flash"
	// ProfileRamp: growth from half the size to twice it over the trace (+-20% over the day); noise 10%.
	ProfileRamp Profile = "ramp"
	// ProfileBatch: a low level (0.4) with a burst to 2.8 for the first 12 minutes of every hour; noise 12%.
	ProfileBatch Profile = "batch"
	// ProfileConstant: the size, noise 8%.
	ProfileConstant Profile = "constant"
	// ProfileStepDown: 1.6x the size for a day and a half, then 0.4x; noise 10%.
	ProfileStepDown Profile = "stepdown"
)

// The extra profiles: shapes beyond the eight, to check the Hvpa on demand it was not tuned on
// (make shootout PROFILES=...; docs/simulate.md). Noise as above.
const (
	// ProfileNightly: a mild day curve (0.6, +-20%) and a job of 4x for 45 minutes from 02:00 every night;
	// noise 12%.
	ProfileNightly Profile = "nightly"
	// ProfileSixHourly: 0.5 with a burst of 3x for the first 30 minutes of every sixth hour (00:00, 06:00,
	// 12:00, 18:00); noise 12%.
	ProfileSixHourly Profile = "sixhourly"
	// ProfileOffice: office hours, 1.6x from 09:00 to 18:00 on weekdays with a 30-minute ramp at each end, 0.3x
	// at night and at weekends (the trace starts on a Monday at midnight); noise 12%.
	ProfileOffice Profile = "office"
	// ProfileGrowth: a load doubling every 32 hours, from a quarter of the size to twice it over 4 days;
	// noise 10%.
	ProfileGrowth Profile = "growth"
	// ProfileStepUp: 0.4x the size for a day and a half, then 1.6x (stepdown the other way); noise 10%.
	ProfileStepUp Profile = "stepup"
)

// Profiles are every profile, in the order the shoot-out runs them.
var Profiles = []Profile{ProfileWeb, ProfileSpiky, ProfileWeekly, ProfileFlash, ProfileRamp, ProfileBatch, ProfileConstant, ProfileStepDown}

// ExtraProfiles are the extra profiles, which the shoot-out runs when asked (PROFILES).
var ExtraProfiles = []Profile{ProfileNightly, ProfileSixHourly, ProfileOffice, ProfileGrowth, ProfileStepUp}

// profileShape is a profile's level (a factor of the size) at a minute and its noise.
type profileShape struct {
	level func(rng *rand.Rand, st *shapeState, minute int) float64
	noise float64
	sizes []float64 // the default sizes (mean CPU cores) of its workloads
	days  float64
}

// shapeState is the state of one workload's shape (a spike under way).
type shapeState struct {
	spike  int
	spikeF float64
}

// diurnal is 1 + a x sin over the day, peaking at 14:00.
func diurnal(minute int, a float64) float64 {
	return 1 + a*math.Sin(2*math.Pi*(float64(minute%1440)/60-8)/24)
}

var profileShapes = map[Profile]profileShape{
	ProfileWeb: {noise: 0.15, sizes: []float64{0.5, 3, 12}, days: 4,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 { return diurnal(m, 0.6) }},
	ProfileSpiky: {noise: 0.12, sizes: []float64{0.4, 1.5, 3}, days: 4, level: spiky},
	ProfileWeekly: {noise: 0.12, sizes: []float64{0.5, 3, 12}, days: 8,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 {
			if day := (m / 1440) % 7; day >= 5 {
				return 0.2 * diurnal(m, 0.3)
			}
			return diurnal(m, 0.6)
		}},
	ProfileFlash: {noise: 0.10, sizes: []float64{0.3, 1.5, 3.5}, days: 4, level: flash},
	ProfileRamp:  {noise: 0.10, sizes: []float64{0.3, 2, 8}, days: 4},
	ProfileBatch: {noise: 0.12, sizes: []float64{0.5, 2, 8}, days: 4,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 {
			if m%60 < 12 {
				return 2.8
			}
			return 0.4
		}},
	ProfileConstant: {noise: 0.08, sizes: []float64{0.4, 3, 20}, days: 4,
		level: func(*rand.Rand, *shapeState, int) float64 { return 1 }},
	ProfileStepDown: {noise: 0.10, sizes: []float64{0.5, 3, 15}, days: 4, level: step(36*60, 1.6, 0.4)},
	ProfileNightly: {noise: 0.12, sizes: []float64{0.3, 2, 6}, days: 4,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 {
			if t := m % 1440; t >= 2*60 && t < 2*60+45 {
				return 4
			}
			return 0.6 * diurnal(m, 0.2)
		}},
	ProfileSixHourly: {noise: 0.12, sizes: []float64{0.5, 2, 8}, days: 4,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 {
			if m%360 < 30 {
				return 3
			}
			return 0.5
		}},
	ProfileOffice: {noise: 0.12, sizes: []float64{0.5, 3, 12}, days: 7, level: office},
	ProfileGrowth: {noise: 0.10, sizes: []float64{0.3, 2, 8}, days: 4,
		level: func(_ *rand.Rand, _ *shapeState, m int) float64 { return 0.25 * math.Exp2(float64(m)/(32*60)) }},
	ProfileStepUp: {noise: 0.10, sizes: []float64{0.5, 3, 15}, days: 4, level: step(36*60, 0.4, 1.6)},
}

// step is a level of before until minute at, then after.
func step(at int, before, after float64) func(*rand.Rand, *shapeState, int) float64 {
	return func(_ *rand.Rand, _ *shapeState, m int) float64 {
		if m < at {
			return before
		}
		return after
	}
}

// office is 1.6 from 09:00 to 18:00 on weekdays (days 0-4 of the trace), rising from 0.3 over the 30 minutes
// from 09:00 and falling back over the 30 minutes to 18:00, and 0.3 otherwise.
func office(_ *rand.Rand, _ *shapeState, m int) float64 {
	if (m/1440)%7 >= 5 {
		return 0.3
	}
	t := float64(m % 1440)
	in := min(1, max(0, (t-9*60)/30), max(0, (18*60-t)/30))
	return 0.3 + 1.3*in
}

// shapeOf is profile p's shape, or an error that names the profiles there are.
func shapeOf(p Profile) (profileShape, error) {
	shape, ok := profileShapes[p]
	if !ok {
		return profileShape{}, fmt.Errorf("--demand %q: use one of %v or %v", p, Profiles, ExtraProfiles)
	}
	return shape, nil
}

func spiky(rng *rand.Rand, st *shapeState, m int) float64 {
	if st.spike == 0 && rng.Float64() < 1.0/45 {
		st.spike, st.spikeF = 2+rng.Intn(7), 3+3*rng.Float64()
	}
	f := diurnal(m, 0.2)
	if st.spike > 0 {
		st.spike--
		f *= st.spikeF
	}
	return f
}

// flash is a mild day curve and a 5x crowd on day 2 from 14:00 to 16:00.
func flash(_ *rand.Rand, _ *shapeState, m int) float64 {
	f := diurnal(m, 0.3)
	start, end := 1440+14*60, 1440+16*60
	switch {
	case m >= start && m < start+5:
		return f * (1 + 4*float64(m-start+1)/5)
	case m >= start+5 && m < end:
		return 5 * f
	case m >= end && m < end+10:
		return f * (5 - 4*float64(m-end+1)/10)
	}
	return f
}

// ProfileDemand describes a shoot-out demand trace: one workload per size, its CPU level size x the profile's
// level x (1 + noise), its memory 512Mi + 2Gi per CPU of the level (without the per-minute CPU noise; 3% of its
// own), one row per pod and minute for Days days from Monday 2025-01-06, deterministic per Seed. A workload
// starts with the pods the EP-0001 intervals give its size (1 pod up to 0.5 CPU, 2 up to 2, 3 up to 6, 4 up to
// 16, else 5), each requesting its share of the mean CPU and 1.5 times its share of the mean memory.
type ProfileDemand struct {
	Profile Profile
	// Sizes are the workloads' mean CPU in cores (default: the profile's three, between 0.3 and 20).
	Sizes []float64
	// Days (default: the profile's, 4, or 8 for weekly).
	Days float64
	Seed int64
	// Namespace (default "shootout"); workloads are named profile-i.
	Namespace string
}

// memoryOf is the memory level of a CPU level (cores): 512Mi + 2Gi per CPU.
func memoryOf(cpu float64) float64 { return 512<<20 + cpu*(2<<30) }

// podsFor is the replica count the EP-0001 intervals give a mean CPU.
func podsFor(size float64) int {
	for i, up := range []float64{0.5, 2, 6, 16} {
		if size <= up {
			return i + 1
		}
	}
	return 5
}

// Each calls fn for every row of the trace, in timestamp order (the row is reused).
func (d ProfileDemand) Each(fn func(*trace.Row) error) error {
	shape, err := shapeOf(d.Profile)
	if err != nil {
		return err
	}
	d = d.withDefaults(shape)
	rng := rand.New(rand.NewSource(d.Seed))
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	type series struct {
		name []byte
		pods [][]byte
		st   shapeState
	}
	all := make([]series, len(d.Sizes))
	for i := range all {
		all[i].name = fmt.Appendf(nil, "%s-%d", d.Profile, i)
		for p := 0; p < podsFor(d.Sizes[i]); p++ {
			all[i].pods = append(all[i].pods, fmt.Appendf(nil, "%s-%d-p%d", d.Profile, i, p))
		}
	}
	minutes := int(d.Days * 1440)
	row := trace.Row{Namespace: []byte(d.Namespace), Container: []byte("app"), HasCPU: true, HasMemory: true, HasCPUReq: true, HasMemReq: true}
	for m := 0; m < minutes; m++ {
		row.Time = start + int64(m)*60
		for i := range all {
			x := &all[i]
			size := d.Sizes[i]
			var level float64
			if shape.level == nil { // ramp
				level = (0.5 + 1.5*float64(m)/float64(max(minutes-1, 1))) * diurnal(m, 0.2)
			} else {
				level = shape.level(rng, &x.st, m)
			}
			cpu := size * level * noise(rng, shape.noise)
			mem := memoryOf(size*level) * noise(rng, 0.03)
			n := float64(len(x.pods))
			row.Workload = x.name
			row.CPURequest, row.MemoryRequest = int64(math.Ceil(1000*size/n)), int64(math.Ceil(1.5*memoryOf(size)/n))
			row.CPU, row.Memory = int64(math.Ceil(1000*cpu/n)), int64(math.Ceil(mem/n))
			for _, p := range x.pods {
				row.Pod = p
				if err := fn(&row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// noise is a factor 1 + sd x z, z standard normal clipped to +-2.5, at least 0.05.
func noise(rng *rand.Rand, sd float64) float64 {
	z := max(-2.5, min(2.5, rng.NormFloat64()))
	return max(0.05, 1+sd*z)
}

func (d ProfileDemand) withDefaults(shape profileShape) ProfileDemand {
	if len(d.Sizes) == 0 {
		d.Sizes = shape.sizes
	}
	if d.Days <= 0 {
		d.Days = shape.days
	}
	if d.Namespace == "" {
		d.Namespace = "shootout"
	}
	return d
}

// WriteProfile writes the trace of d (TRACE-FORMAT v1).
func WriteProfile(out io.Writer, d ProfileDemand) error {
	shape, err := shapeOf(d.Profile)
	if err != nil {
		return err
	}
	d = d.withDefaults(shape)
	w := bufio.NewWriterSize(out, 1<<20)
	_, _ = fmt.Fprintf(w, "# demand profile=%s sizes=%v days=%g seed=%d\n", d.Profile, d.Sizes, d.Days, d.Seed)
	_, _ = w.WriteString("timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n") // bufio keeps the first write error; the Flush at the end returns it
	buf := make([]byte, 0, 160)
	err = d.Each(func(r *trace.Row) error {
		buf = strconv.AppendInt(buf[:0], r.Time, 10)
		for _, f := range [][]byte{r.Namespace, r.Workload, r.Pod, r.Container} {
			buf = append(append(buf, ','), f...)
		}
		for _, v := range []int64{r.CPU, r.Memory, r.CPURequest, r.MemoryRequest} {
			buf = strconv.AppendInt(append(buf, ','), v, 10)
		}
		buf = append(buf, ",\n"...)
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	return w.Flush()
}
