x = f"{d["k"]} {f"{1:>{w}}"} {x!r:'^10}"
class TestA:	@pytest.mark.parametrize(["shape", "dtype"], [((1,), torch.half), pytest.param((2,), torch.bool, id="b")])
	async def test_x(self, shape, \
	 dtype): pass
