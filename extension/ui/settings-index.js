// The settings page's section index: a sticky sidebar on wide windows, a sticky strip of links on
// narrow ones. The link of the section being read is marked (aria-current); following a link moves
// the keyboard focus into that section, so the next Tab continues there.

export class SectionIndex {
  constructor(nav) {
    this.nav = nav;
    this.links = [...nav.querySelectorAll("a[href^='#']")];
    this.sections = this.links.map((link) => document.getElementById(link.hash.slice(1))).filter(Boolean);
    for (const section of this.sections) section.tabIndex = -1;
    for (const link of this.links) {
      link.addEventListener("click", (event) => {
        const section = document.getElementById(link.hash.slice(1));
        if (!section) return;
        event.preventDefault();
        history.replaceState(null, "", link.hash);
        this.go(section);
      });
    }
    const seen = new Map(); // section -> whether it crosses the upper part of the window
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) seen.set(entry.target, entry.isIntersecting);
      // A section the user chose stays marked while it is on screen (the last ones cannot scroll
      // up to the top).
      if (this.chosen && onScreen(this.chosen)) return;
      this.chosen = null;
      const first = this.sections.find((section) => seen.get(section));
      if (first) this.mark(first.id);
    }, { rootMargin: "-10% 0px -60% 0px" });
    for (const section of this.sections) observer.observe(section);
  }

  go(section) {
    this.chosen = section;
    section.scrollIntoView({ block: "start" });
    section.focus({ preventScroll: true });
    this.mark(section.id);
  }

  mark(id) {
    for (const link of this.links) {
      if (link.hash === `#${id}`) {
        link.setAttribute("aria-current", "true");
        // The narrow strip scrolls sideways: keep the marked link in it visible.
        if (this.nav.scrollWidth > this.nav.clientWidth) this.nav.scrollLeft = Math.max(0, link.offsetLeft - 24);
      } else link.removeAttribute("aria-current");
    }
  }

  // The address named a section: the sections are drawn after the host answers, so go there again.
  revealHash() {
    const section = location.hash && document.getElementById(location.hash.slice(1));
    if (section && this.sections.includes(section)) this.go(section);
  }
}

function onScreen(el) {
  const box = el.getBoundingClientRect();
  return box.bottom > 0 && box.top < window.innerHeight;
}
