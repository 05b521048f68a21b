import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")


@pytest.fixture(scope="session")
def demo():
    from placeborag.explore import demo_scenario

    return demo_scenario()
