"""dpas serve in a real browser: headless Chromium driven by chromium-driver through Debian's
python3-selenium. The page is loaded with the seed's reference inputs in its address; the test
reads 1024 accelerators and ratio 64 from it, moves the dp_degree slider to 64 by keyboard and
reads 32, types dp_degree 0 and reads the library's message beside the field. It also checks
that every control has a label, that the page made no request the Content-Security-Policy
refused (nothing but the server itself is ever asked), and keeps a screenshot.

Usage: /usr/bin/python3 test_browser.py DPAS SCREENSHOT.png [CHROMIUM CHROMEDRIVER]
Chromium only ever talks to 127.0.0.1: background networking is off and every host name but
127.0.0.1 resolves to nothing."""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DPAS, SHOT = sys.argv[1], sys.argv[2]
CHROMIUM = sys.argv[3] if len(sys.argv) > 3 else "/usr/bin/chromium"
DRIVER = sys.argv[4] if len(sys.argv) > 4 else "/usr/bin/chromedriver"
T = Checks()
WAIT = 60  # seconds, for each thing the page must show

REF = ("model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
       "&checkpoint_bytes_per_param=14B")


def browser(profile):
    o = Options()
    o.binary_location = CHROMIUM
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,2700", "--hide-scrollbars", "--no-first-run",
              "--no-default-browser-check", "--disable-extensions", "--disable-sync",
              "--disable-background-networking", "--disable-component-update",
              "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
              "--disable-client-side-phishing-detection", "--metrics-recording-only",
              "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
              "--user-data-dir=" + profile, "--lang=en-US"]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=o)


def text_of(d, id_):
    try:
        return d.find_element(By.ID, id_).text.strip()
    except Exception:
        return None


def wait_for(d, what, cond):
    try:
        WebDriverWait(d, WAIT, poll_frequency=0.1).until(lambda _: cond())
        return True
    except TimeoutException:
        T.check(False, "the page did not show %s within %d s" % (what, WAIT))
        return False


with Server(DPAS, "--threads", "2") as srv, tempfile.TemporaryDirectory() as profile:
    base = "http://127.0.0.1:%d" % srv.port
    d = browser(profile)
    try:
        d.get(base + "/?" + REF)
        # the seed's reference scenario: 1024 accelerators, gather_traffic_ratio 64
        if wait_for(d, "1024 accelerators", lambda: text_of(d, "v-accelerators") == "1024"):
            T.check(text_of(d, "v-gather_traffic_ratio") == "64",
                    "ratio 64 on the page, got %r" % text_of(d, "v-gather_traffic_ratio"))
            T.check("127 / 1.984375 = 64" in (d.find_element(By.ID, "attrs").text),
                    "the ratio's equation with the numbers substituted")
        slider = d.find_element(By.ID, "dp_degree_slider")
        T.check(slider.get_attribute("max") == "1024", "the slider is bounded by the fleet's 1024 "
                "accelerators (max %r)" % slider.get_attribute("max"))
        # the rule x schedule table, with the cheapest realisable schedule of each rule marked
        wait_for(d, "the cost table", lambda: len(d.find_elements(By.CSS_SELECTOR, "#cost td.cheapest")) > 0)
        cheap = {td.get_attribute("data-rule"): td.get_attribute("data-schedule")
                 for td in d.find_elements(By.CSS_SELECTOR, "#cost td.cheapest")}
        T.check(len(cheap) == 12, "one cheapest schedule marked for each of the 12 rules: %r" % cheap)
        # from `dpas cost ReferenceJobAttackSurface` (README): median's least hierarchical time
        # is sharded's 4.83555 s, the mean's the in-network AllReduce's 3.11113 s
        T.check(cheap.get("median") == "sharded" and cheap.get("mean") == "innetwork",
                "cheapest marked: median on sharded, mean on innetwork, got %r" % cheap)
        T.check(len(d.find_elements(By.CSS_SELECTOR, "#rules tbody tr")) >= 12, "the rules table")
        T.check(wait_for(d, "the plots", lambda: d.execute_script(
            "return ['plot-bytes','plot-time'].every(id => document.getElementById(id).naturalWidth > 0)")),
            "both plots drawn by /api/v1/plot.svg")
        # every control has a label
        unlabelled = d.execute_script("""
            return [...document.querySelectorAll('input, select')].filter(e =>
              !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id);""")
        T.check(unlabelled == [], "every control has a label, unlabelled: %r" % unlabelled)
        # move dp_degree to 64 by keyboard, on the slider
        slider.send_keys(Keys.LEFT * 64)
        ok = wait_for(d, "ratio 32 after the slider moved to 64",
                      lambda: text_of(d, "v-gather_traffic_ratio") == "32")
        T.check(ok and d.find_element(By.ID, "dp_degree").get_attribute("value") == "64",
                "the slider moved dp_degree to 64")
        T.check("dp_degree=64" in d.current_url, "the inputs live in the address: %s" % d.current_url)
        time.sleep(0.5)  # the plots of the new view
        d.save_screenshot(SHOT)
        T.check(os.path.getsize(SHOT) > 10000, "a screenshot kept at %s" % SHOT)
        # a link reproduces the view
        d.get(d.current_url)
        wait_for(d, "the view again from its link", lambda: text_of(d, "v-gather_traffic_ratio") == "32")
        # enter dp_degree 0: the library's message beside the field
        box = d.find_element(By.ID, "dp_degree")
        box.send_keys(Keys.CONTROL + "a")
        box.send_keys("0")
        want = "dp_degree must be >= 1, got 0"
        if wait_for(d, "the error beside dp_degree", lambda: text_of(d, "err-dp_degree") == want):
            T.check(box.get_attribute("aria-invalid") == "true", "the field is marked invalid")
            T.check(text_of(d, "status") == "", "the error is beside its field, not in the banner")
        root, ext = os.path.splitext(SHOT)
        d.save_screenshot(root + "-error" + ext)
        # nothing refused by the Content-Security-Policy, nothing fetched from elsewhere
        logs = [e["message"] for e in d.get_log("browser")]
        csp = [m for m in logs if "Content Security Policy" in m or "Refused to" in m]
        T.check(csp == [], "no request refused by the Content-Security-Policy: %r" % csp[:3])
        external = d.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
            ".filter(u => !u.startsWith(location.origin))")
        T.check(external == [], "no resource from outside the server: %r" % external[:3])
    finally:
        d.quit()

code = srv.stop()
T.check(code == 0, "the server stopped cleanly on SIGTERM (exit %r)" % code)
T.done()
