use super::*;

fn origin(variable: &str) -> Arc<Origin> {
    Arc::new(Origin::Substituted {
        variable: variable.into(),
        defined_at: None,
        unknown: false,
        undefined: Vec::new(),
        secret: false,
        if_unset: None,
    })
}

fn span(file: u32, line: u32, col: u32) -> Span {
    Span {
        file: FileId(file),
        start: 7,
        end: u32::MAX,
        line,
        col,
    }
}

/// How many places hold a slot of `origin`, by the table.
fn handles_of(origin: &Arc<Origin>) -> u32 {
    table()
        .slots
        .iter()
        .filter(|s| s.origin.as_ref().is_some_and(|o| Arc::ptr_eq(o, origin)))
        .map(|s| s.handles)
        .sum()
}

#[test]
fn a_place_gives_back_the_span_and_style_it_was_made_with() {
    for at in [
        span(0, 0, 0),
        span(3, LINE_LIMIT - 1, COL_MASK),
        span(3, LINE_LIMIT, 1),
        span(3, 2, COL_MASK + 1),
        span(FILE_MASK + 1, 2, 3),
        span(u32::MAX, u32::MAX, u32::MAX),
    ] {
        for style in [Style::Plain, Style::Quoted, Style::Block] {
            let place = Place::new(at, style, None);
            assert_eq!(place.span(), at);
            assert_eq!(place.style(), style);
            assert_eq!(place.clone().span(), at);
        }
    }
}

#[test]
fn a_place_keeps_its_style_and_span_beside_its_origin() {
    let o = origin("APP");
    let at = span(1, 2, 3);
    let mut place = Place::new(at, Style::Block, None);
    place.set_origin(Some(o.clone()));
    assert_eq!(place.span(), at);
    assert_eq!(place.style(), Style::Block);
    place.set_style(Style::Quoted);
    assert_eq!(place.style(), Style::Quoted);
    assert_eq!(place.origin(), Some(&*o));
    let moved = span(4, 5, 6);
    place.set_span(moved);
    assert_eq!((place.span(), place.origin()), (moved, Some(&*o)));
    place.set_origin(None);
    assert_eq!(place.origin(), None);
    assert_eq!((place.span(), place.style()), (moved, Style::Quoted));
}

#[test]
fn an_origin_lives_as_long_as_a_place_has_it() {
    let o = origin("CLUSTER");
    let at = span(1, 2, 3);
    let a = Place::new(at, Style::Plain, Some(o.clone()));
    let mut b = Place::new(at, Style::Plain, Some(o.clone()));
    let c = a.clone();
    assert_eq!(handles_of(&o), 3);
    assert_eq!(Arc::strong_count(&o), 3, "a slot for each place made");
    drop(a);
    b.set_origin(Some(o.clone()));
    assert_eq!(handles_of(&o), 2, "set again, the old slot let go");
    drop(b);
    assert_eq!(c.origin(), Some(&*o));
    drop(c);
    assert_eq!(handles_of(&o), 0);
    assert_eq!(Arc::strong_count(&o), 1, "freed with the last place");
}

/// The origins of live places, and only those, are found without their
/// trees: the question a rule asks of every object's nodes.
#[test]
fn any_origin_finds_the_origins_of_live_places_only() {
    let named = |o: &Origin| matches!(o, Origin::Substituted { variable, .. } if variable == "ANY_ORIGIN_PROBE");
    assert!(!any_origin(named));
    let place = Place::new(
        span(1, 2, 3),
        Style::Plain,
        Some(origin("ANY_ORIGIN_PROBE")),
    );
    let copy = place.clone();
    assert!(any_origin(named));
    drop(place);
    assert!(any_origin(named));
    drop(copy);
    assert!(!any_origin(named));
}
