//go:build amd64 && !race

package calltrail

import (
	"github.com/calltrail/calltrail/internal/gstate"
	"github.com/calltrail/calltrail/internal/records"
	"github.com/calltrail/calltrail/internal/ring"
	"github.com/calltrail/calltrail/internal/wire"
)

// asmHotPath says whether enterFast and exitFast are in assembly.
const asmHotPath = true

// enterFast records the calling goroutine's entry into f. It does in
// assembly what tracer.enter does in its common case, and jumps to
// enterSlow for every other: no function id yet, no offsets (hot.pOff
// 0), the goroutine does not own its P's ring, or the ring is full.
//
// Being assembly, it is never preempted, so the P it reads stays the
// goroutine's until it returns, the guarantee tracer.enter gets from
// nosplit (see gstate.StateP). Against tracer.enter it saves a Go frame,
// the spills around the call of gstate's assembly, and the checks the
// compiler cannot prove away; TestAsmHotPath checks that it writes what
// tracer.enter does.
func enterFast(f *Func) Call

// exitFast records the end of call c, which returned no error:
// tracer.exitErr's common case in assembly, as enterFast is
// tracer.enter's, jumping to exitSlow for a marked call (callRoot,
// callMain) or a panicking goroutine too.
func exitFast(c Call)

// gInR14 returns what R14 holds when Go code calls an assembly function:
// the g, where the hot path takes it from.
func gInR14() uintptr

// Constants for the assembly, which reads them from go_asm.h.
const (
	gM           = gstate.MOffset
	gPanic       = gstate.PanicOffset
	ringSize     = ring.Size
	ringState    = ring.StateOffset
	ringOwner    = ring.OwnerOffset
	ringP        = ring.POffset
	ringTail     = ring.TailOffset
	ringSlots    = ring.SlotsOffset
	ringMask     = ring.MaskOffset
	ringLen      = ring.SizeOffset
	ringShift    = ring.HeadShift
	ringHeadMask = ring.HeadMask
	slotWord     = ring.SlotWord
	slotTime     = ring.SlotTime
	slotShift    = 4 // log2 of ring.SlotSize, checked below
	enterOp      = wire.OpEnter
	returnOp     = uint64(records.Return)<<2 | wire.OpExit
	mainShift    = 62 - idMainBit // Func's idMain to Call's callMain
)

var _ [0]struct{} = [ring.SlotSize - 1<<slotShift]struct{}{}
