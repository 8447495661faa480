package gpu
import ("testing";"fmt")
func TestShowPlan(t *testing.T){
 h:=Residency{Accum:[2]uint32{132*256,132*256},Reduce:[2]uint32{132*256,132*256}}
 s:=KeyShape{LogN:24,NbWires:1<<24+3,NbPublic:3,NbA:1<<24+1,NbB:1<<24+1,NbK:1<<24,NbZ:1<<24-1}
 for _,r:=range []uint64{23<<30,15<<30}{p,err:=PlanDevice(s,3,r,h);fmt.Println(p,err,p.Total()>>20)}
}
