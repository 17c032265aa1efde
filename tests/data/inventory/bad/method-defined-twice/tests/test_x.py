import pytest


class TestX:
    @pytest.mark.x
    def test_x(self):
        pass

    class TestInner:
        def test_x(self):
            pass

    def test_x(self):
        pass
