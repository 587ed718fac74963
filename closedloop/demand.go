package closedloop

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strconv"
	"time"
)

// Shape is a demand curve for WriteDemand.
type Shape string

// The shapes.
const (
	// ShapeConstant: the demand stays at its level.
	ShapeConstant Shape = "constant"
	// ShapeStep: the demand switches between its level and the step level every StepEvery.
	ShapeStep Shape = "step"
	// ShapeDiurnal: the demand follows a day curve around its level, level x (1 + Amplitude x sin).
	ShapeDiurnal Shape = "diurnal"
)

// Demand describes a synthetic demand trace: Workloads workloads, each starting with Pods pods of the given
// requests, one usage row per pod and container every Interval for Days days. The workload's demand (the
// sum over its pods) follows Shape; it is split evenly over the pods in the trace (a closed-loop run only
// reads the sums). Noise is a relative uniform noise (0.1 = +-10%), deterministic per Seed. Workload i's
// levels are scaled by (1 + i x Spread) so that several workloads differ.
type Demand struct {
	Shape                     Shape
	Workloads, Pods           int
	Days                      float64
	Interval                  time.Duration
	CPU, Memory               float64 // millicores, bytes: the level
	StepCPU, StepMemory       float64 // the other level of a step
	StepEvery                 time.Duration
	Amplitude                 float64
	Noise, Spread             float64
	CPURequest, MemoryRequest float64
	Seed                      int64
	Start                     time.Time
}

// Validate names the first field out of range.
func (d Demand) Validate() error {
	switch {
	case d.Shape != ShapeConstant && d.Shape != ShapeStep && d.Shape != ShapeDiurnal:
		return fmt.Errorf("--shape %q: use constant, step or diurnal", d.Shape)
	case d.Workloads < 1 || d.Pods < 1:
		return fmt.Errorf("--workloads and --pods must be at least 1")
	case d.Days <= 0 || d.Interval < time.Second:
		return fmt.Errorf("--days must be positive and --interval at least 1s")
	case d.CPU < 0 || d.Memory < 0 || d.StepCPU < 0 || d.StepMemory < 0:
		return fmt.Errorf("--cpu, --memory, --step-cpu and --step-memory must not be negative")
	case d.Shape == ShapeStep && d.StepEvery < d.Interval:
		return fmt.Errorf("--step-every must be at least --interval")
	case d.Noise < 0 || d.Noise >= 1:
		return fmt.Errorf("--noise must be in [0, 1)")
	}
	return nil
}

// level is the demand factor of the shape at offset from the start (for the CPU and memory levels).
func (d Demand) level(offset time.Duration) (float64, float64) {
	switch d.Shape {
	case ShapeStep:
		if int64(offset/d.StepEvery)%2 == 1 {
			return d.StepCPU, d.StepMemory
		}
	case ShapeDiurnal:
		f := 1 + d.Amplitude*math.Sin(2*math.Pi*offset.Hours()/24)
		return d.CPU * f, d.Memory * f
	}
	return d.CPU, d.Memory
}

// WriteDemand writes the trace (TRACE-FORMAT v1).
func WriteDemand(out io.Writer, d Demand) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.Start.IsZero() {
		d.Start = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	_, _ = fmt.Fprintf(w, "# demand shape=%s workloads=%d pods=%d days=%g interval=%s cpu=%g memory=%g seed=%d\n",
		d.Shape, d.Workloads, d.Pods, d.Days, d.Interval, d.CPU, d.Memory, d.Seed)
	_, _ = w.WriteString("timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n") // bufio keeps the first write error; the Flush at the end returns it
	rng := rand.New(rand.NewSource(d.Seed))
	steps := int(d.Days * 24 * float64(time.Hour) / float64(d.Interval))
	buf := make([]byte, 0, 128)
	for s := 0; s < steps; s++ {
		offset := time.Duration(s) * d.Interval
		ts := d.Start.Add(offset).Unix()
		cpu, mem := d.level(offset)
		for i := 0; i < d.Workloads; i++ {
			f := 1 + float64(i)*d.Spread
			for p := 0; p < d.Pods; p++ {
				noise := func() float64 { return 1 + d.Noise*(2*rng.Float64()-1) }
				buf = strconv.AppendInt(buf[:0], ts, 10)
				buf = fmt.Appendf(buf, ",ns,wl-%d,wl-%d-%d,app,", i, i, p)
				buf = strconv.AppendInt(buf, int64(math.Ceil(cpu*f*noise()/float64(d.Pods))), 10)
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(math.Ceil(mem*f*noise()/float64(d.Pods))), 10)
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(d.CPURequest), 10)
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(d.MemoryRequest), 10)
				buf = append(buf, ",\n"...)
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
	}
	return w.Flush()
}
